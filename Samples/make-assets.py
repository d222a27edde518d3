#!/usr/bin/env python3
"""Makes the sample books' generated assets, deterministically (the outputs are committed):

  quire-scripts/EPUB/images/harbour.png   a 480×300 picture of a harbour light, drawn here
  quire-sample.pdf                        a 4-page PDF: labels, an outline, a rotated page, a spread

Run from anywhere: python3 Samples/make-assets.py
"""
import math, os, struct, zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def png(path, width, height, pixel):
    rows = bytearray()
    for y in range(height):
        rows.append(0)
        for x in range(width):
            rows.extend(pixel(x, y))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    data += chunk(b"IDAT", zlib.compress(bytes(rows), 9)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(data)


def harbour(x, y):
    # Night sky fading to the sea, a lighthouse with a beam, and a quay.
    w, h = 480, 300
    horizon = 190
    if y < horizon:
        t = y / horizon
        r, g, b = int(20 + 40 * t), int(30 + 60 * t), int(70 + 90 * t)
        # The beam: a wedge from the lamp at (340, 70) towards the upper left.
        dx, dy = x - 340, y - 70
        if dx < 0 and abs(dy - dx * 0.18) < -dx * 0.12:
            fade = max(0.0, 1 + dx / 340)
            r, g, b = int(r + 200 * fade), int(g + 190 * fade), int(b + 120 * fade)
    else:
        t = (y - horizon) / (h - horizon)
        wave = 10 * math.sin(x / 9.0 + y / 3.0)
        r, g, b = int(15 + 20 * t + wave), int(40 + 30 * t + wave), int(80 + 40 * t + wave)
    if 325 <= x <= 355 and 70 <= y <= horizon:          # the tower
        stripe = ((y - 70) // 20) % 2
        r, g, b = (230, 230, 225) if stripe == 0 else (190, 40, 40)
    if 328 <= x <= 352 and 55 <= y < 70:                # the lamp room
        r, g, b = 255, 235, 150
    if y >= 250 and x < 200:                            # the quay
        r, g, b = 70, 65, 60
    return bytes((max(0, min(255, r)), max(0, min(255, g)), max(0, min(255, b))))


def pdf(path):
    # Page sizes in points; page 3 is a two-page spread, page 2 is stored landscape with /Rotate 90.
    pages = [
        ("Harbour Lights", "A sample PDF made for Quire.", 420, 595, 0),
        ("Tide Table", "Stored sideways, shown upright by /Rotate 90.", 595, 420, 90),
        ("The Chart", "A spread: left half and right half.", 840, 595, 0),
        ("Colophon", "Set in Helvetica, one of the PDF base fonts.", 420, 595, 0),
    ]
    objects = []  # (number, bytes)
    def add(body):
        objects.append(body)
        return len(objects)
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    page_numbers = []
    pages_number = len(objects) + 1 + 2 * len(pages)
    for index, (title, line, width, height, rotate) in enumerate(pages):
        if rotate == 90:
            # Drawn turned a quarter anticlockwise, so that the page turned clockwise reads upright:
            # the shown top edge is the stored left edge, the shown left edge the stored bottom.
            text = "BT /F1 28 Tf 0 1 -1 0 80 40 Tm (%s) Tj ET BT /F1 14 Tf 0 1 -1 0 120 40 Tm (%s) Tj ET" % (title, line)
            drawing = "0.2 0.3 0.6 rg %d 40 120 %d re f" % (width - 180, height - 80)
        else:
            text = "BT /F1 28 Tf 40 %d Td (%s) Tj ET BT /F1 14 Tf 40 %d Td (%s) Tj ET" % (height - 80, title, height - 120, line)
            drawing = "0.2 0.3 0.6 rg 40 60 %d 120 re f" % (width - 80)
        if rotate == 0 and width > height:  # a spread: a rule down the middle and a heading on each half
            drawing += " 0 0 0 RG 2 w %d 40 m %d %d l S" % (width // 2, width // 2, height - 40)
            drawing += " BT /F1 18 Tf %d %d Td (Right half) Tj ET" % (width // 2 + 40, height - 160)
        stream = (text + " " + drawing).encode("ascii")
        content = add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        page = add(
            b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %d %d] /Rotate %d /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>"
            % (pages_number, width, height, rotate, font, content))
        page_numbers.append(page)
    kids = b" ".join(b"%d 0 R" % n for n in page_numbers)
    assert add(b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(pages))) == pages_number
    # Outline: one entry per page.
    outline_number = len(objects) + 1
    first_item = outline_number + 1
    add(b"<< /Type /Outlines /First %d 0 R /Last %d 0 R /Count %d >>" % (first_item, first_item + len(pages) - 1, len(pages)))
    for index, (title, _, _, height, _) in enumerate(pages):
        links = b""
        if index > 0:
            links += b" /Prev %d 0 R" % (first_item + index - 1)
        if index < len(pages) - 1:
            links += b" /Next %d 0 R" % (first_item + index + 1)
        add(b"<< /Title (%s) /Parent %d 0 R /Dest [%d 0 R /XYZ 0 %d 0]%s >>" % (title.encode(), outline_number, page_numbers[index], height, links))
    # Page labels: i for the first page, then 1, 2, 3.
    catalog = add(
        b"<< /Type /Catalog /Pages %d 0 R /Outlines %d 0 R /PageMode /UseOutlines"
        b" /PageLabels << /Nums [0 << /S /r >> 1 << /S /D >>] >> >>" % (pages_number, outline_number))
    info = add(b"<< /Title (Harbour Lights) /Author (The Quire project) /Creator (Samples/make-assets.py) >>")
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, catalog, info, xref)
    with open(path, "wb") as f:
        f.write(bytes(out))


png(os.path.join(HERE, "quire-scripts/EPUB/images/harbour.png"), 480, 300, harbour)
pdf(os.path.join(HERE, "quire-sample.pdf"))
