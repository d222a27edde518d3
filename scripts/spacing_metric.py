#!/usr/bin/env python3
"""Inter-word spacing of justified lines in MuPDF's structured text (mutool draw -F stext).

For each font size, the natural space width is the most common space width (last lines of
paragraphs and ragged lines keep it). A line counts as justified when it reaches the right edge of
the text column and is not the last line of its block. Prints: count mean standard-deviation of
space width / natural width over all spaces of justified lines.
"""
import collections
import statistics
import sys
import xml.etree.ElementTree as ET


def quad(char):
    return [float(v) for v in char.get("quad").split()]


def gap_width(before, space, after):
    """The set width of a space: from the end of the word before to the start of the word after
    (MuPDF justifies by moving words, so the space's own quad keeps its natural width)."""
    q = quad(space)
    return quad(after)[0] - quad(before)[2], round(q[5] - q[1], 1)


def main(path):
    root = ET.parse(path).getroot()
    spaces_by_size = collections.Counter()
    blocks = []
    for page in root.iter("page"):
        right_edge = 0.0
        page_blocks = []
        for block in page.iter("block"):
            lines = []
            for line in block.iter("line"):
                chars = list(line.iter("char"))
                if not chars:
                    continue
                bbox = [float(v) for v in line.get("bbox").split()]
                right_edge = max(right_edge, bbox[2])
                spaces = []
                for index, char in enumerate(chars):
                    if char.get("c") == " " and 0 < index < len(chars) - 1 and chars[index + 1].get("c") != " ":
                        width, size = gap_width(chars[index - 1], char, chars[index + 1])
                        spaces.append((width, size))
                        spaces_by_size[(round(width, 2), size)] += 1
                lines.append((bbox[2], spaces))
            page_blocks.append(lines)
        blocks.append((right_edge, page_blocks))
    natural = {}
    for (width, size), count in spaces_by_size.items():
        if size not in natural or count > spaces_by_size[(natural[size], size)]:
            natural[size] = width
    factors = []
    for right_edge, page_blocks in blocks:
        for lines in page_blocks:
            for index, (right, spaces) in enumerate(lines):
                if index == len(lines) - 1 or right < right_edge - 1.0:
                    continue
                for width, size in spaces:
                    if natural.get(size):
                        factors.append(width / natural[size])
    if len(factors) < 2:
        print("0 0 0")
        return
    print(len(factors), round(statistics.fmean(factors), 6), round(statistics.pstdev(factors), 6))


if __name__ == "__main__":
    main(sys.argv[1])
