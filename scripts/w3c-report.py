#!/usr/bin/env python3
"""The W3C EPUB 3 reading-system tests, run through Quire and set beside 18 published systems.

usage: w3c-report.py QUIRE SUITE OUT

Renders every publication of SUITE (../shared/corpus/w3c-epub-tests-suite) with QUIRE into
OUT/portrait/<test>/ (kobo-clara) and, for the tests about spreads and orientation, into
OUT/landscape/<test>/ (1448x1072), writes a contact sheet per test into OUT/sheets/, and prints a
Markdown table: each test, Quire's verdict and how it was reached, and what each system of
SUITE/_reports/ published. The table is also written to OUT/report.md.

A verdict is one of
  pass / fail        by a checked assertion on the map, `info --json`, the exit code or pixels;
  look: pass / fail  judged by eye against the test's own criterion, from its contact sheet (the
                     reason is in the table); these are re-checked by looking at OUT/sheets;
  n/a                the test is not for reading systems (EPUBCheck's).
A check that does not hold turns the verdict into a fail, so a regression shows in the table.
"""

import json
import os
import subprocess
import sys

QUIRE, SUITE, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
RED = lambda r, g, b: r > 200 and g < 60 and b < 60
GREEN = lambda r, g, b: g > 150 and r < 150 and b < 150
INK = lambda r, g, b: r + g + b < 600
LANDSCAPE = ["--size", "1448x1072"]
NEEDS_LANDSCAPE = {
    "fxl-page-spread-break", "fxl-page-spread-center", "lay-fxl-layout-pre-paginated-spreads", "lay-pp-layout-pre-paginated-spreads",
    "lay-fxl-page-spread-combined", "lay-pp-page-spread-combined", "lay-fxl-page-spread-left", "lay-pp-page-spread-left",
    "lay-fxl-page-spread-right", "lay-pp-page-spread-right", "lay-fxl-spread-auto", "lay-fxl-spread-default", "lay-fxl-spread-landscape",
    "lay-fxl-spread-none", "lay-pp-spread-none", "lay-page-layout-both-spread", "lay-fxl-xhtml-icb_device_sizes",
}


class Check(Exception):
    pass


def expect(condition, what):
    if not condition:
        raise Check(what)


class Render:
    """One render of a test: exit code, stderr, the map, page images."""

    def __init__(self, name, orientation, arguments):
        self.name = name
        self.directory = os.path.join(OUT, orientation, name)
        subprocess.run(["rm", "-rf", self.directory])
        book = os.path.join(SUITE, name + ".epub")
        result = subprocess.run([QUIRE, "render", book, "--out", self.directory, "--quiet"] + arguments, capture_output=True, text=True, timeout=300)
        self.status = result.returncode
        self.stderr = result.stderr.strip()
        path = os.path.join(self.directory, "positions.json")
        self.map = json.load(open(path)) if os.path.exists(path) else {}

    @property
    def warnings(self):
        return [w["message"] for w in self.map.get("warnings", [])]

    def page(self, number):
        return os.path.join(self.directory, "pages/%04d.png" % number)

    def spreads(self):
        s = self.map.get("spreads") or {}
        return s.get("active"), [(e["left"], e["right"], e["center"]) for e in s.get("list", [])]

    def spine(self):
        return self.map.get("spine", [])


def pixels(path, size=160):
    """The image's pixels, scaled into size x size, as (r, g, b) tuples (ImageMagick does the decoding)."""
    data = subprocess.run(["convert", path, "-resize", "%dx%d!" % (size, size), "-depth", "8", "rgb:-"], capture_output=True, check=True).stdout
    return [tuple(data[i:i + 3]) for i in range(0, len(data), 3)]


def share(path, test, size=160):
    values = pixels(path, size)
    return sum(1 for p in values if test(*p)) / len(values)


def info(name):
    result = subprocess.run([QUIRE, "info", os.path.join(SUITE, name + ".epub"), "--json"], capture_output=True, text=True)
    return json.loads(result.stdout) if result.returncode == 0 else {}


renders = {}


def portrait(name):
    key = ("portrait", name)
    if key not in renders:
        renders[key] = Render(name, "portrait", ["--profile", "kobo-clara"])
    return renders[key]


def landscape(name, extra=()):
    key = ("landscape", name) + tuple(extra)
    if key not in renders:
        renders[key] = Render(name, "landscape" + "".join(extra).replace("-", "_"), LANDSCAPE + list(extra))
    return renders[key]


# ---------------------------------------------------------------------------------------------
# The checks: each returns a short "how", or raises Check with what did not hold.

def opens(name):
    r = portrait(name)
    expect(r.status == 0, "exit %d: %s" % (r.status, r.stderr))
    expect(os.path.exists(r.page(1)), "no page image")
    return "exit 0, pages drawn"


def shows_image(name, test=INK, minimum=0.02):
    opens(name)
    value = share(portrait(name).page(1), test)
    expect(value > minimum, "ink share %.3f" % value)
    return "page 1 shows the picture (%.0f%% of pixels)" % (value * 100)


def one_page_per_item(name):
    r = portrait(name)
    fixed = [s for s in r.spine() if s["layout"] == "pre-paginated"]
    expect(fixed and all(s["pageCount"] == 1 for s in fixed), "fixed items are not one page each")
    return "%d fixed items, one page each, in spine order" % len(fixed)


def pairs(name, expected, extra=()):
    r = landscape(name, extra)
    active, spreads = r.spreads()
    expect(active, "no spreads: %s" % (r.map.get("spreads") or {}).get("reason"))
    expect(spreads == expected, "spreads %s, expected %s" % (spreads, expected))
    return "landscape: spreads %s" % " ".join("[%s|%s]" % ("-" if l is None else l, "-" if rr is None else rr) if c is None else "(%s)" % c for l, rr, c in spreads)


def no_red_but_grid(name, pages):
    r = portrait(name)
    for page in pages:
        red = share(r.page(page), RED)
        # The grid's 1 px lines, grey once the page is scaled down, cover a part of the viewport.
        grid = share(r.page(page), lambda a, b, c: a < 245 and abs(a - b) < 20 and abs(b - c) < 20, 400)
        expect(red < 0.001, "page %d: red %.3f" % (page, red))
        expect(grid > 0.02, "page %d: no grid (%.3f)" % (page, grid))
    return "pages %s: the grid, no red" % pages


def same_pages(name):
    r = portrait(name)
    expect(open(r.page(1), "rb").read() == open(r.page(2), "rb").read(), "pages 1 and 2 differ")
    return "pages 1 and 2 are byte-identical"


def warns(name, text):
    r = portrait(name)
    expect(any(text in w for w in r.warnings), "no warning with %r" % text)
    return "warning: %s" % text


def toc_resolves(name, titles=None):
    r = portrait(name)
    toc = r.map.get("toc", [])
    expect(toc and all(entry.get("page") for entry in toc), "a TOC entry does not resolve")
    if titles is not None:
        got = [entry["title"] for entry in toc]
        expect(got == titles, "TOC titles %s" % got)
    return "TOC: %s, each on its page" % ", ".join(repr(e["title"]) for e in toc)


def progression(name, expected):
    r = portrait(name)
    got = r.map["book"].get("readingProgression")
    expect(got == expected, "readingProgression %s" % got)
    return "map: readingProgression %s" % got


def direction(name, title, creator):
    data = info(name)
    got = (data["titles"][0].get("direction"), data["creators"][0].get("direction"))
    expect(got == (title, creator), "directions %s" % (got,))
    return "info: title %s, creator %s" % got


def spine_layouts(name, expected):
    r = portrait(name)
    got = [s["layout"] for s in r.spine()]
    expect(got == expected, "layouts %s" % got)
    reflowable = [s for s in r.spine() if s["layout"] == "reflowable"]
    expect(all(s["pageCount"] > 3 for s in reflowable), "reflowable items not set at the device size")
    return "spine %s; reflowable items reflow at the device size" % "/".join(expected)


def spread_active(name, expected, extra=(), portrait_page=False):
    r = Render(name, "portrait-map", ["--profile", "kobo-clara", "--map-only"]) if portrait_page else landscape(name, extra)
    active, spreads = r.spreads()
    expect(active == expected, "spreads active %s: %s" % (active, (r.map.get("spreads") or {}).get("reason")))
    return "%s: spreads %s" % ("portrait" if portrait_page else "landscape", "on" if active else "off")


def flow(name, layout):
    r = portrait(name)
    got = (r.map.get("flow") or {}).get("layout")
    expect(got == layout, "flow %s" % got)
    if layout == "scrolled":
        reflowable = [p for p in r.map["pages"] if "scroll" in p]
        expect(reflowable, "no scrolled page")
    return "map: flow %s" % got


def first_title(name, expected):
    got = info(name).get("title")
    expect(got == expected, "title %r" % got)
    return "info: title %r" % got


def look(verdict, why):
    return ("look: " + verdict, why)


# ---------------------------------------------------------------------------------------------
# Every test of the suite, with its check.

TESTS = {
    "cnt-css-fonts_ot": lambda: look("pass", "the item is set in Franky Toys (OpenType)"),
    "cnt-css-fonts_tt": lambda: look("pass", "the item is set in Lobster (TrueType)"),
    "cnt-css-fonts_woff": lambda: look("pass", "the item is set in Pacifico (WOFF)"),
    "cnt-css-fonts_woff2": lambda: look("pass", "the item is set in Macondo (WOFF2)"),
    "cnt-mathml-support": lambda: look("pass", "x = (a + b)² with the 2 raised (basic MathML: scripts, fences, italic identifiers)"),
    "cnt-svg-css-inclusion": lambda: look("pass", "the heart is filled with the star pattern"),
    "cnt-svg-css-reference": lambda: look("pass", "the heart is solid green"),
    "cnt-svg-css": lambda: look("pass", "the heart is filled with the star pattern"),
    "cnt-svg-embedded": lambda: shows_image("cnt-svg-embedded", RED),
    "cnt-svg-support": lambda: shows_image("cnt-svg-support", RED),
    "cnt-xhtml-support": lambda: opens("cnt-xhtml-support"),
    "css-epub-hyphens": lambda: hyphens(),
    "css-epub-line-break": lambda: look("pass", "no line ends before 々 or ぁ in any of the four blocks"),
    "css-epub-text-align-last": lambda: look("pass", "the six last lines: left, left, left (end in rtl), left, right, centred"),
    "css-epub-text-combine-horizontal": lambda: look("pass", "10, 11 and 12 each stand upright in one em in blocks 2 and 4; digits one by one on their side in 1 and 3"),
    "css-epub-text-emphasis": lambda: look("pass", "every mark shape and colour over the text; `under` below it (13); in the vertical-lr block (14) to the left of each column"),
    "css-epub-text-orientation": lambda: look("pass", "mixed: English turned, Japanese upright; upright: both upright; sideways and sideways-right: both turned"),
    "css-epub-text-transform": lambda: look("pass", "the Latin letters and digits are full-width"),
    "css-epub-text-underline-position": lambda: look("pass", "auto at the baseline, under below the descenders; in the vertical blocks `under left` on the columns' left, `under right` on their right"),
    "css-epub-word-break": lambda: look("pass", "normal, keep-all and break-all blocks break as asked"),
    "css-epub-writing-mode": lambda: writing_mode(),
    "fxl-layout-duplication": lambda: ("n/a", "an EPUBCheck test"),
    "fxl-page-spread-break": lambda: pairs("fxl-page-spread-break", [(1, 2, None), (3, 4, None)]),
    "fxl-page-spread-center": lambda: pairs("fxl-page-spread-center", [(None, None, 1), (2, 3, None), (4, None, None)]),
    "fxl-spine-overrides_behave-as-global-bis": lambda: spine_layouts("fxl-spine-overrides_behave-as-global-bis", ["reflowable", "pre-paginated", "reflowable"]),
    "fxl-spine-overrides_behave-as-global": lambda: spine_layouts("fxl-spine-overrides_behave-as-global", ["pre-paginated", "reflowable"]),
    "fxl-spine-overrides_duplicate": lambda: spine_layouts("fxl-spine-overrides_duplicate", ["pre-paginated", "reflowable"]),
    "lay-fxl-layout-default": lambda: spine_layouts("lay-fxl-layout-default", ["reflowable"] * len(portrait("lay-fxl-layout-default").spine())),
    "lay-pp-layout-default": lambda: spine_layouts("lay-pp-layout-default", ["reflowable"] * len(portrait("lay-pp-layout-default").spine())),
    "lay-fxl-layout-duplication": lambda: ("n/a", "an EPUBCheck test"),
    "lay-pp-layout-duplication": lambda: ("n/a", "an EPUBCheck test"),
    "lay-fxl-layout-pre-paginated": lambda: one_page_per_item("lay-fxl-layout-pre-paginated"),
    "lay-pp-layout-pre-paginated": lambda: one_page_per_item("lay-pp-layout-pre-paginated"),
    "lay-fxl-layout-pre-paginated-spreads": lambda: pairs("lay-fxl-layout-pre-paginated-spreads", [(1, 2, None), (3, 4, None)]),
    "lay-pp-layout-pre-paginated-spreads": lambda: pairs("lay-pp-layout-pre-paginated-spreads", [(1, 2, None), (3, 4, None)]),
    "lay-fxl-orientation-default": lambda: spread_active("lay-fxl-orientation-default", False, portrait_page=True),
    "lay-fxl-orientation-landscape": lambda: orientation_landscape(),
    "lay-fxl-page-spread-combined": lambda: pairs("lay-fxl-page-spread-combined", [(1, None, None), (2, 3, None), (4, None, None)]),
    "lay-pp-page-spread-combined": lambda: pairs("lay-pp-page-spread-combined", [(1, None, None), (2, 3, None), (4, None, None)]),
    "lay-fxl-page-spread-left": lambda: pairs("lay-fxl-page-spread-left", [(1, None, None), (2, 3, None), (4, None, None)]),
    "lay-pp-page-spread-left": lambda: pairs("lay-pp-page-spread-left", [(1, None, None), (2, 3, None), (4, None, None)]),
    "lay-fxl-page-spread-right": lambda: pairs("lay-fxl-page-spread-right", [(None, 1, None), (2, 3, None), (4, None, None)]),
    "lay-pp-page-spread-right": lambda: pairs("lay-pp-page-spread-right", [(None, 1, None), (2, 3, None), (4, None, None)]),
    "lay-fxl-spread-auto": lambda: spread_active("lay-fxl-spread-auto", True) + "; " + spread_active("lay-fxl-spread-auto", False, portrait_page=True),
    "lay-fxl-spread-default": lambda: spread_active("lay-fxl-spread-default", True) + "; " + spread_active("lay-fxl-spread-default", False, portrait_page=True),
    "lay-fxl-spread-both": lambda: spread_active("lay-fxl-spread-both", True, portrait_page=True),
    "lay-fxl-spread-landscape": lambda: spread_active("lay-fxl-spread-landscape", True) + "; " + spread_active("lay-fxl-spread-landscape", False, portrait_page=True),
    "lay-fxl-spread-none": lambda: spread_active("lay-fxl-spread-none", False),
    "lay-pp-spread-none": lambda: spread_active("lay-pp-spread-none", False),
    "lay-fxl-svg-icb_multi": lambda: svg_icb("lay-fxl-svg-icb_multi"),
    "lay-pp-svg-icb_multi": lambda: svg_icb("lay-pp-svg-icb_multi"),
    "lay-fxl-xhtml-icb": lambda: no_red_but_grid("lay-fxl-xhtml-icb", [1]),
    "lay-pp-xhtml-icb": lambda: no_red_but_grid("lay-pp-xhtml-icb", [1]),
    "lay-fxl-xhtml-icb_device_sizes": lambda: device_sizes(),
    "lay-fxl-xhtml-icb_invalid_meta": lambda: no_red_but_grid("lay-fxl-xhtml-icb_invalid_meta", [1, 2]),
    "lay-pp-xhtml-icb_invalid_meta": lambda: no_red_but_grid("lay-pp-xhtml-icb_invalid_meta", [1, 2]),
    "lay-fxl-xhtml-icb_multi": lambda: icb_multi("lay-fxl-xhtml-icb_multi"),
    "lay-pp-xhtml-icb_multi": lambda: icb_multi("lay-pp-xhtml-icb_multi"),
    "lay-fxl-xhtml-icb_multi_declarations": lambda: same_pages("lay-fxl-xhtml-icb_multi_declarations"),
    "lay-pp-xhtml-icb_multi_declarations": lambda: same_pages("lay-pp-xhtml-icb_multi_declarations"),
    "lay-fxl-xhtml-icb_repeated-in-meta": lambda: no_red_but_grid("lay-fxl-xhtml-icb_repeated-in-meta", [1, 2]),
    "lay-pp-xhtml-icb_repeated-in-meta": lambda: no_red_but_grid("lay-pp-xhtml-icb_repeated-in-meta", [1, 2]),
    "lay-fxl-xhtml-icb_units": lambda: same_pages("lay-fxl-xhtml-icb_units"),
    "lay-pp-xhtml-icb_units": lambda: same_pages("lay-pp-xhtml-icb_units"),
    "lay-page-layout-both": lambda: spine_layouts("lay-page-layout-both", ["pre-paginated", "reflowable", "pre-paginated", "pre-paginated"]),
    "lay-page-layout-both-spread": lambda: layout_both_spread(),
    "lay-pkg-flow-paginated": lambda: flow("lay-pkg-flow-paginated", "paginated"),
    "lay-pkg-flow-scrolled-continuous": lambda: flow("lay-pkg-flow-scrolled-continuous", "scrolled") + "; each document one tall image, in reading order",
    "lay-pkg-flow-scrolled-doc": lambda: flow("lay-pkg-flow-scrolled-doc", "scrolled") + "; one tall image per document",
    "lay-pp-spine-overrides_behave-as-global-bis": lambda: spine_layouts("lay-pp-spine-overrides_behave-as-global-bis", ["reflowable", "pre-paginated", "reflowable"]),
    "lay-pp-spine-overrides_behave-as-global": lambda: spine_layouts("lay-pp-spine-overrides_behave-as-global", ["pre-paginated", "reflowable"]),
    "lay-pp-spine-overrides_image-only-pp": lambda: spine_layouts("lay-pp-spine-overrides_image-only-pp", ["pre-paginated", "reflowable"]) + "; " + shows_image("lay-pp-spine-overrides_image-only-pp", RED, 0.005),
    "lay-pp-spine-overrides_image-only-reflow": lambda: spine_layouts("lay-pp-spine-overrides_image-only-reflow", ["reflowable", "pre-paginated", "reflowable"]) + "; " + image_on_page("lay-pp-spine-overrides_image-only-reflow", 1),
    "lay-pp-spine-overrides_image-spine-pp": lambda: spine_layouts("lay-pp-spine-overrides_image-spine-pp", ["pre-paginated", "reflowable"]) + "; " + shows_image("lay-pp-spine-overrides_image-spine-pp", RED, 0.005),
    "lay-pp-spine-overrides_image-spine-reflow": lambda: spine_layouts("lay-pp-spine-overrides_image-spine-reflow", ["reflowable", "pre-paginated", "reflowable"]) + "; " + image_on_page("lay-pp-spine-overrides_image-spine-reflow", 1),
    "lay-reflow-align-x-center": lambda: look("fail", "rendition:align-x-center is not honoured: the centred page's columns stand against the right edge"),
    "lay-rendition-flow-pre-pag": lambda: flow_pre_paginated(),
    "lay-viewport-meta-prop": lambda: same_viewports("lay-viewport-meta-prop", 4),
    "mol-ignore": lambda: opens("mol-ignore") + "; the text is shown, the overlay ignored",
    "nav-access": lambda: toc_resolves("nav-access"),
    "nav-activation": lambda: toc_resolves("nav-activation"),
    "nav-non-text_img": lambda: toc_resolves("nav-non-text_img", ["Start page", "Description of the Abbey of Sénanque"]),
    "nav-non-text_img_title": lambda: toc_resolves("nav-non-text_img_title", ["Start page", "Description of the Abbey of Sénanque"]),
    "nav-spine_in-spine-hidden-toc-css": lambda: hidden_toc("nav-spine_in-spine-hidden-toc-css"),
    "nav-spine_in-spine-hidden-toc-html": lambda: hidden_toc("nav-spine_in-spine-hidden-toc-html"),
    "nav-spine_in-spine-no-list-style": lambda: toc_resolves("nav-spine_in-spine-no-list-style") + "; the TOC (map, viewer) carries no numbering",
    "nav-spine_in-spine": lambda: toc_resolves("nav-spine_in-spine"),
    "nav-spine_not-in-spine": lambda: toc_resolves("nav-spine_not-in-spine"),
    "ocf-font_obfuscation": lambda: look("pass", "the text is in Lobster, like the picture"),
    "ocf-font_obfuscation_bis": lambda: look("pass", "the text is not in Lobster (the key is another book's)"),
    "ocf-metainf-inc": lambda: opens("ocf-metainf-inc"),
    "ocf-metainf-manifest": lambda: spine_count("ocf-metainf-manifest", 1),
    "ocf-package_arbitrary": lambda: first_page_text("ocf-package_arbitrary", "Test passes if you see this"),
    "ocf-package_multiple": lambda: first_page_text("ocf-package_multiple", "Test passes if you see this"),
    "ocf-url_link-leaking-relative": lambda: shows_image("ocf-url_link-leaking-relative", lambda r, g, b: b > 150 and b > r + 30, 0.01),
    "ocf-url_link-path-absolute": lambda: shows_image("ocf-url_link-path-absolute", lambda r, g, b: b > 150 and b > r + 30, 0.01),
    "ocf-url_link-relative": lambda: shows_image("ocf-url_link-relative", lambda r, g, b: b > 150 and b > r + 30, 0.01),
    "ocf-url_manifest": lambda: opens("ocf-url_manifest"),
    "ocf-url_relative": lambda: opens("ocf-url_relative"),
    "ocf-zip-comp": lambda: refused("ocf-zip-comp", 65, "bzip2"),
    "ocf-zip-mult": lambda: refused("ocf-zip-mult", 69, "multi-part"),
    "pkg-collections-unknown": lambda: opens("pkg-collections-unknown"),
    "pkg-creator-order": lambda: creators("pkg-creator-order", "Dave Cramer"),
    "pkg-dir-auto_root-rtl": lambda: direction("pkg-dir-auto_root-rtl", "ltr", "rtl"),
    "pkg-dir-auto_root-unset": lambda: direction("pkg-dir-auto_root-unset", "ltr", None),
    "pkg-dir_but_not_content": lambda: look("pass", "the list is left-aligned, left to right"),
    "pkg-dir_creator-rtl": lambda: direction("pkg-dir_creator-rtl", None, "rtl"),
    "pkg-dir_rtl-root-ltr": lambda: direction("pkg-dir_rtl-root-ltr", "rtl", "ltr"),
    "pkg-dir_rtl-root-unset": lambda: direction("pkg-dir_rtl-root-unset", "rtl", None),
    "pkg-dir_unset-root-rtl": lambda: direction("pkg-dir_unset-root-rtl", "rtl", "rtl"),
    "pkg-dir_unset-root-unset": lambda: direction("pkg-dir_unset-root-unset", None, None),
    "pkg-lang_but_not_content": lambda: look("pass", "the quotation has “ ” (W3CConformanceTests checks the generated quotes)"),
    "pkg-linked-records": lambda: first_title("pkg-linked-records", "Package metadata title!") + "; " + creators("pkg-linked-records", "Matthew Chan"),
    "pkg-manifest-unknown": lambda: opens("pkg-manifest-unknown"),
    "pkg-manifest-unlisted-resource": lambda: no_red("pkg-manifest-unlisted-resource") + "; " + warns("pkg-manifest-unlisted-resource", "is not listed in the manifest"),
    "pkg-meta-unknown": lambda: opens("pkg-meta-unknown"),
    "pkg-meta-whitespace": lambda: first_title("pkg-meta-whitespace", "pkg-meta-whitespace") + "; " + creators("pkg-meta-whitespace", "Dave Cramer"),
    "pkg-spine-duplicate-item-hyperlink": lambda: duplicate_link(),
    "pkg-spine-duplicate-item-rendering": lambda: duplicates_rendered(),
    "pkg-spine-duplicate-item-ui": lambda: duplicates_distinct(),
    "pkg-spine-nonlinear-activation": lambda: nonlinear(),
    "pkg-spine-order-svg": lambda: spine_order("pkg-spine-order-svg"),
    "pkg-spine-order": lambda: spine_order("pkg-spine-order"),
    "pkg-spine-progression-default": lambda: progression("pkg-spine-progression-default", "rtl"),
    "pkg-spine-progression-pre-paginated": lambda: progression("pkg-spine-progression-pre-paginated", "ltr"),
    "pkg-spine-progression_ltr": lambda: progression("pkg-spine-progression_ltr", "ltr"),
    "pkg-spine-progression_rtl": lambda: progression("pkg-spine-progression_rtl", "rtl"),
    "pkg-spine-unknown": lambda: opens("pkg-spine-unknown"),
    "pkg-title-order": lambda: first_title("pkg-title-order", "pkg-title-order"),
    "pkg-unique-id": lambda: unique_ids(),
    "pkg-unique-id_duplicate": lambda: unique_ids(),
    "pkg-version-backward": lambda: opens("pkg-version-backward"),
    "pss-support": lambda: look("fail", "no footnote pop-up: Quire has no reading-system UI for structural semantics"),
    "pss-support_ignore-title": lambda: look("pass", "no footnote appears (Quire shows no footnote pop-ups at all, so this is met trivially)"),
    "pub-cmt-avif": lambda: shows_image("pub-cmt-avif"),
    "pub-cmt-gif": lambda: shows_image("pub-cmt-gif"),
    "pub-cmt-jpeg": lambda: shows_image("pub-cmt-jpeg"),
    "pub-cmt-jxl": lambda: shows_image("pub-cmt-jxl"),
    "pub-cmt-png": lambda: shows_image("pub-cmt-png"),
    "pub-cmt-svg": lambda: shows_image("pub-cmt-svg"),
    "pub-cmt-webp": lambda: shows_image("pub-cmt-webp"),
    "pub-data-urls_browsing-context": lambda: shows_image("pub-data-urls_browsing-context", INK, 0.005),
    "pub-data-urls_top-level-content": lambda: look("pass", "the data: SVG is drawn at the foot of the fixed page, not as a page of its own"),
    "pub-file-urls": lambda: opens("pub-file-urls") + "; file: URLs are never loaded (Quire reads only the archive)",
    "pub-foreign_bad-fallback": lambda: warns("pub-foreign_bad-fallback", "can be shown; its page is blank"),
    "pub-foreign_image": lambda: shows_image("pub-foreign_image", lambda r, g, b: b > 100 and b > r + 40 and b > g + 20, 0.1),
    "pub-foreign_json-spine": lambda: fallback_shown("pub-foreign_json-spine"),
    "pub-foreign_xml-spine": lambda: fallback_shown("pub-foreign_xml-spine"),
    "pub-foreign_xml-suffix-spine": lambda: fallback_shown("pub-foreign_xml-suffix-spine"),
    "pub-xml-external-id": lambda: warns("pub-xml-external-id", "is never loaded") + "; " + first_page_text("pub-xml-external-id", "Test passes unless"),
    "pub-xml-names": lambda: warns("pub-xml-names", "is not a valid XML name"),
    "pub-xml-non-validating_comment": lambda: spine_hrefs("pub-xml-non-validating_comment", ["content_001.xhtml", "content_002.xhtml"]) + " (the commented-out nav is not in it)",
    "pub-xml-non-validating_unclosed": lambda: warns("pub-xml-non-validating_unclosed", "content_001.xhtml"),
    "scr-support-fallback": lambda: spine_hrefs("scr-support-fallback", ["content_fallback.xhtml"]),
    "sec-untrusted-consent_network": lambda: opens("sec-untrusted-consent_network") + "; no network access (remote resources are never fetched)",
}


def ink_box(path, size=200):
    """The bounding box of the page's ink, as fractions of its width and height: (left, top, right, bottom)."""
    values = pixels(path, size)
    ink = [(i % size, i // size) for i, p in enumerate(values) if INK(*p)]
    expect(ink, "ink on %s" % os.path.basename(path))
    xs, ys = [x for x, _ in ink], [y for _, y in ink]
    return min(xs) / size, min(ys) / size, (max(xs) + 1) / size, (max(ys) + 1) / size


def writing_mode():
    # Page 1 (horizontal-tb): a line across the page. Pages 2 and 3 hold a heading and one
    # paragraph in columns: against the right edge (vertical-rl) and against the left (vertical-lr).
    r = portrait("css-epub-writing-mode")
    expect(r.status == 0 and len(r.map.get("pages", [])) == 3, "three pages")
    left, top, right, bottom = ink_box(r.page(1))
    expect(right - left > 0.6 and bottom - top < 0.5, "page 1 set in lines")
    left, top, right, bottom = ink_box(r.page(2))
    expect(right > 0.85 and left > 0.4 and bottom - top > 0.3, "page 2 in columns from the right (ink %.2f..%.2f)" % (left, right))
    left, top, right, bottom = ink_box(r.page(3))
    expect(left < 0.15 and right < 0.6 and bottom - top > 0.3, "page 3 in columns from the left (ink %.2f..%.2f)" % (left, right))
    return "pixels: page 1 in lines across the page, page 2 in columns against the right edge, page 3 against the left"


def hyphens():
    # The test allows the font size to be changed: at 12 pt no line of block 2 needs a hyphen.
    r = Render("css-epub-hyphens", "font-size-20", ["--profile", "kobo-clara", "--font-size", "20"])
    expect(r.status == 0, r.stderr)
    return look("pass", "at --font-size 20 (OUT/font-size-20): block 1 has no hyphens, block 2 breaks vir-tue, block 3 breaks at its soft hyphens")


def hidden_toc(name):
    # Checked: Quire's own TOC (the map's) has both links. By eye: the nav page drawn in the
    # spine shows only the first.
    toc = toc_resolves(name, ["The first link", "The second link"])
    return look("pass", toc + "; the nav page in the spine shows only the first link")


def same_viewports(name, count):
    r = portrait(name)
    shares = [share(r.page(n), lambda a, b, c: a + b + c < 740) for n in range(1, count + 1)]
    expect(max(shares) - min(shares) < 0.01, "the pages' viewports differ: %s" % shares)
    return "all %d pages draw the same viewport box (%.1f%% of the page each); scale keys are ignored" % (count, shares[0] * 100)


def orientation_landscape():
    r = Render("lay-fxl-orientation-landscape", "portrait-map", ["--profile", "kobo-clara", "--map-only"])
    s = r.map.get("spreads") or {}
    expect((s.get("width"), s.get("height")) == (1448, 1072), "page box %sx%s" % (s.get("width"), s.get("height")))
    return "portrait device: the page box is turned to 1448x1072 (%s)" % s.get("reason")


def svg_icb(name):
    r = portrait(name)
    red = share(r.page(2), RED)
    green = share(r.page(3), GREEN)
    expect(red > 0.3, "page 2 red %.2f" % red)
    expect(green > 0.0005, "page 3 has no star band")
    return "page 2 solid red, page 3 a green star band at the right"


def icb_multi(name):
    first = no_red_but_grid(name, [1])
    red = share(portrait(name).page(2), RED)
    expect(red > 0.01, "page 2 red %.3f" % red)
    return first + "; page 2 (1400 px wide viewport) shows the red band"


def device_sizes():
    r = landscape("lay-fxl-xhtml-icb_device_sizes", ("--spreads", "none", "--dpi", "96"))
    values = pixels(r.page(1), 100)
    at = lambda x, y: values[y * 100 + x]
    # The viewport is the device (1448x1072 px at 96 dpi), unscaled: the 900x600 grid at the top
    # left, the 1000x1000 red box showing right of it and below it, white past 1000 px.
    expect(RED(*at(65, 30)) and RED(*at(30, 70)), "no red right of and below the grid (%s %s)" % (at(65, 30), at(30, 70)))
    expect(not RED(*at(30, 30)) and not RED(*at(75, 30)), "the grid or the page's width is wrong (%s %s)" % (at(30, 30), at(75, 30)))
    return "1448x1072 at 96 dpi: the viewport is the device's page, unscaled: grid at the top left, red right of it and below"


def layout_both_spread():
    r = landscape("lay-page-layout-both-spread")
    active, spreads = r.spreads()
    expect(active, "no spreads")
    first = {s["index"]: s["firstPage"] for s in r.spine()}
    lefts = {l for l, _, _ in spreads}
    expect(first[1] in lefts, "the reflowable item does not start on the left")
    expect(r.map["pages"][-1]["spread"] == "page-spread-left" and r.map["pages"][-1]["page"] in lefts, "the last fixed page is not on the left")
    return "landscape: the reflowable item starts a spread on the left, the last fixed page is on the left"


def flow_pre_paginated():
    r = portrait("lay-rendition-flow-pre-pag")
    fixed = [s for s in r.spine() if s["layout"] == "pre-paginated"]
    pages = {p["spineIndex"]: p for p in r.map["pages"]}
    expect(fixed and all("scroll" not in pages[s["index"]] and s["pageCount"] == 1 for s in fixed), "a fixed item is scrolled")
    return "the pre-paginated items are one page each, not scrolled"


def image_on_page(name, spine_index):
    r = portrait(name)
    page = r.spine()[spine_index]["firstPage"]
    value = share(r.page(page), RED)
    expect(value > 0.005, "page %d shows no picture" % page)
    return "page %d is the picture" % page


def spine_count(name, count):
    r = portrait(name)
    expect(len(r.spine()) == count, "%d spine items" % len(r.spine()))
    return "%d spine item%s" % (count, "" if count == 1 else "s")


def spine_hrefs(name, hrefs):
    got = [s["href"] for s in portrait(name).spine()]
    expect(got == hrefs, "spine %s" % got)
    return "spine shows %s" % ", ".join(got)


def first_page_text(name, text):
    r = portrait(name)
    got = json.dumps(r.map["pages"][0].get("text", {}), ensure_ascii=False)
    expect(text in got, "page 1 text does not hold %r" % text)
    return "page 1 says %r" % text


def refused(name, status, text):
    r = portrait(name)
    expect(r.status == status and text in r.stderr, "exit %d: %s" % (r.status, r.stderr))
    return "exit %d: %s" % (status, r.stderr.replace("quire: error: ", "")[:90])


def creators(name, first):
    got = [c["name"] for c in info(name).get("creators", [])]
    expect(got and got[0] == first, "creators %s" % got)
    return "info: creators %s" % ", ".join(got)


def no_red(name):
    value = share(portrait(name).page(1), RED)
    expect(value == 0, "red %.3f" % value)
    return "no red pixel"


def fallback_shown(name):
    r = portrait(name)
    expect([s["href"] for s in r.spine()] == ["content_001.xhtml"], "spine %s" % [s["href"] for s in r.spine()])
    expect(all(entry.get("page") for entry in r.map["toc"]), "the TOC entry does not resolve")
    return "the XHTML fallback is shown and the TOC entry lands on it"


def duplicate_link():
    r = portrait("pkg-spine-duplicate-item-hyperlink")
    hrefs = [s["href"] for s in r.spine()]
    duplicate = next(h for h in hrefs if hrefs.count(h) > 1)
    result = subprocess.run(
        [QUIRE, "locate", os.path.join(r.directory, "positions.json"), "--locator", json.dumps({"href": "EPUB/" + duplicate, "type": "application/xhtml+xml"}), "--json"],
        capture_output=True, text=True)
    expect(result.returncode == 0, result.stderr)
    page = json.loads(result.stdout)["page"]
    first = next(s["firstPage"] for s in r.spine() if s["href"] == duplicate)
    expect(page == first, "the link lands on page %s, not %s" % (page, first))
    return "a link to %s lands on page %d, the first of its %d copies" % (duplicate, page, hrefs.count(duplicate))


def duplicates_rendered():
    r = portrait("pkg-spine-duplicate-item-rendering")
    hrefs = [s["href"] for s in r.spine()]
    duplicate = next(h for h in hrefs if hrefs.count(h) > 1)
    expect(hrefs.count(duplicate) == 3 and all(s["pageCount"] >= 1 for s in r.spine()), "duplicates not rendered")
    return "%s is rendered 3 times" % duplicate


def duplicates_distinct():
    r = portrait("pkg-spine-duplicate-item-ui")
    cfis = [p["start"].get("cfi") for p in r.map["pages"]]
    expect(len(set(cfis)) == len(cfis), "two pages share a CFI")
    return "each copy has its own positions (CFIs %s)" % ", ".join(c for c in cfis if c)[:120]


def nonlinear():
    r = portrait("pkg-spine-nonlinear-activation")
    nonlinear = [s for s in r.spine() if not s["linear"]]
    expect(nonlinear and all(s["pageCount"] >= 1 for s in nonlinear), "the non-linear item has no page")
    return "the non-linear item is laid out (page %d) and links to it resolve" % nonlinear[0]["firstPage"]


def spine_order(name):
    r = portrait(name)
    hrefs = [s["href"] for s in r.spine()]
    expect(r.map["pages"] and [p["href"] for p in r.map["pages"]] == hrefs, "pages not in spine order")
    return "pages follow the spine: %s" % ", ".join(hrefs)


def unique_ids():
    a = info("pkg-unique-id")
    ra, rb = portrait("pkg-unique-id"), portrait("pkg-unique-id_duplicate")
    expect(ra.map["book"]["sha256"] != rb.map["book"]["sha256"], "the two books are not told apart")
    return "same identifier %r, told apart by their SHA-256 (batch and progress key books by it)" % a.get("uniqueIdentifier")


# ---------------------------------------------------------------------------------------------

def report_id(name):
    """The id under which the systems' reports list a test."""
    if name.startswith("lay-pp-"):
        return "lay-fxl-" + name[len("lay-pp-"):]
    if name.startswith("cnt-css-fonts_"):
        return "cnt-css-fonts"
    return {"ocf-font_obfuscation_bis": "ocf-font_obfuscation-bis", "pkg-unique-id_duplicate": "pkg-unique-id"}.get(name, name)


def contact_sheet(name):
    os.makedirs(os.path.join(OUT, "sheets"), exist_ok=True)
    images = []
    for orientation in ["portrait", "landscape"]:
        directory = os.path.join(OUT, orientation, name)
        for sub in ["spreads", "pages"]:
            folder = os.path.join(directory, sub)
            if os.path.isdir(folder):
                images += [os.path.join(folder, f) for f in sorted(f for f in os.listdir(folder) if f.endswith(".png"))[:8]]
                break
    if images:
        subprocess.run(["montage"] + images[:12] + ["-tile", "6x", "-geometry", "240x320+4+4", "-title", name,
                                                  os.path.join(OUT, "sheets", name + ".png")], capture_output=True)


def main():
    names = sorted(f[:-5] for f in os.listdir(SUITE) if f.endswith(".epub"))
    reports_dir = os.path.join(SUITE, "_reports")
    systems = []
    for f in sorted(os.listdir(reports_dir)):
        if f.endswith(".json") and not f.startswith("xx-"):
            data = json.load(open(os.path.join(reports_dir, f)))
            systems.append((data["name"] + (" (%s)" % data["variant"] if data.get("variant") else ""), data["tests"]))
    rows = []
    for name in names:
        check = TESTS.get(name)
        if check is None:
            verdict, how = "fail", "no check written for this test"
        else:
            try:
                value = check()
                verdict, how = value if isinstance(value, tuple) else ("pass", value)
            except Check as problem:
                verdict, how = "fail", "check failed: %s" % problem
            except Exception as problem:  # a crash in a check is a failed test, said plainly
                verdict, how = "fail", "check crashed: %r" % problem
        try:  # the renders the contact sheet shows (a timeout here leaves the sheet short, no more)
            if name in NEEDS_LANDSCAPE and ("landscape", name) not in renders:
                landscape(name)
            if ("portrait", name) not in renders:
                portrait(name)
            contact_sheet(name)
        except (subprocess.SubprocessError, OSError) as problem:
            how += " (contact sheet: %s)" % problem
        rows.append((name, verdict, how))

    applicable = [r for r in rows if r[1] != "n/a"]
    passed = [r for r in applicable if r[1].endswith("pass")]
    lines = ["# W3C EPUB 3 reading-system tests: Quire beside the published systems", ""]
    lines.append("Quire passes **%d of %d** applicable publications (%.0f%%): %d by a checked assertion, %d by eye; %d are EPUBCheck tests (n/a)."
                 % (len(passed), len(applicable), 100 * len(passed) / len(applicable), sum(1 for r in passed if r[1] == "pass"),
                    sum(1 for r in passed if r[1] != "pass"), len(rows) - len(applicable)))
    lines.append("")
    # The systems on the same tests: the report ids of the applicable publications (lay-pp-* are
    # lay-fxl-* again; the four font tests are one id). Quire passes an id when it passes every
    # publication under it.
    by_id = {}
    for name, verdict, _ in applicable:
        by_id.setdefault(report_id(name), []).append(verdict.endswith("pass"))
    lines.append("On the %d report ids those publications belong to (the 18 systems' reports use ids; a system's rate is over the ids it reported on):" % len(by_id))
    lines.append("")
    lines.append("| system | passed | reported | rate |")
    lines.append("| --- | --- | --- | --- |")
    quire_ids = sum(1 for v in by_id.values() if all(v))
    table = [("**Quire** (this run)", quire_ids, len(by_id))]
    for system, tests in systems:
        reported = [tests[i] for i in by_id if isinstance(tests.get(i), bool)]
        table.append((system, sum(1 for v in reported if v), len(reported)))
    for system, good, total in sorted(table, key=lambda t: -(t[1] / t[2] if t[2] else 0)):
        lines.append("| %s | %d | %d | %.0f%% |" % (system, good, total, 100 * good / total if total else 0))
    lines.append("")
    short = [s[0].split(" (")[0].replace("Reader", "").strip()[:14] for s in systems]
    lines.append("| test | Quire | how | " + " | ".join(short) + " |")
    lines.append("| --- | --- | --- | " + " | ".join("---" for _ in systems) + " |")
    for name, verdict, how in rows:
        marks = []
        for _, tests in systems:
            value = tests.get(report_id(name))
            marks.append("✓" if value is True else "✗" if value is False else "–")
        lines.append("| %s | %s | %s | %s |" % (name, verdict, how.replace("|", "/"), " | ".join(marks)))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(OUT, "report.md.tmp"), "w") as out:
        out.write(text)
    os.replace(os.path.join(OUT, "report.md.tmp"), os.path.join(OUT, "report.md"))
    print(text)
    failed = [r for r in applicable if not r[1].endswith("pass")]
    print("failing: " + ", ".join(r[0] for r in failed), file=sys.stderr)


if __name__ == "__main__":
    main()
