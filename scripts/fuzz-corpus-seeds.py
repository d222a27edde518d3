#!/usr/bin/env python3
"""Seeds from the test corpus (../shared/corpus or QUIRE_CORPUS), when it is there: its small
EPUBs whole, and the stylesheets, content documents, images and package documents inside its
books, each at most 32 KB (libFuzzer's -max_len follows the largest seed). Never kept in git.

    fuzz-corpus-seeds.py CORPUS OUTDIR
"""
import hashlib
import os
import sys
import zipfile

LIMIT = 32 << 10
PER_KIND = 400
corpus, out = sys.argv[1], sys.argv[2]
counts = {}
CONTAINER = (b'<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
             b'<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>')


def keep(target, data, suffix=""):
    if not data or len(data) > LIMIT or counts.get(target, 0) >= PER_KIND:
        return
    counts[target] = counts.get(target, 0) + 1
    os.makedirs(os.path.join(out, target), exist_ok=True)
    name = "corpus-" + hashlib.sha1(data).hexdigest()[:16] + suffix
    with open(os.path.join(out, target, name), "wb") as f:
        f.write(data)


books = sorted(os.path.join(d, f) for d, _, fs in os.walk(corpus) for f in fs if f.endswith(".epub"))
for book in books:
    with open(book, "rb") as f:
        whole = f.read()
    keep("FuzzContainer", whole)
    try:
        archive = zipfile.ZipFile(book)
    except zipfile.BadZipFile:
        continue
    package, nav, ncx = b"", b"", b""
    for info in archive.infolist():
        if info.file_size > LIMIT:
            continue
        name = info.filename.lower()
        try:
            data = archive.read(info)
        except Exception:
            continue
        if name.endswith(".css"):
            keep("FuzzCSS", data)
        elif name.endswith((".xhtml", ".html", ".htm")):
            keep("FuzzXHTML", data)
            keep("FuzzLayout", data)
            if b"<nav" in data and not nav:
                nav = data
        elif name.endswith((".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".avif", ".jxl", ".bmp")):
            keep("FuzzImages", data)
        elif name.endswith(".opf") and not package:
            package = data
        elif name.endswith(".ncx") and not ncx:
            ncx = data
    if package:
        keep("FuzzContainer", b"\0".join([CONTAINER, package, nav, ncx]))
print(" ".join(f"{k}:{v}" for k, v in sorted(counts.items())))
