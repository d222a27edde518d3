// The user-agent stylesheet: HTML's rendering defaults (HTML Living Standard §15), adapted to books.
// Page margins belong to layout, so body has none; links get no colour (print books).

enum UserAgentStyleSheet {
    static let css = #"""
    @namespace "http://www.w3.org/1999/xhtml";
    @namespace epub "http://www.idpf.org/2007/ops";
    @namespace m "http://www.w3.org/1998/Math/MathML";

    html, address, blockquote, body, center, dialog, div, figure, figcaption, footer, form, header, hr,
    legend, listing, main, p, plaintext, pre, search, xmp, article, aside, h1, h2, h3, h4, h5, h6, hgroup,
    nav, section, dl, dd, dt, ol, ul, menu, dir, details, summary, fieldset, optgroup, frameset, frame {
      display: block;
    }
    [hidden], area, base, basefont, datalist, head, link, meta, noembed, noframes, param, rp, script, style,
    template, title, noscript, audio:not([controls]), dialog:not([open]) {
      display: none;
    }
    html { font-family: serif; }
    body { margin: 0; }

    p, blockquote, figure, listing, plaintext, pre, xmp, dl, dir, menu, ol, ul {
      margin-top: 1em; margin-bottom: 1em;
    }
    blockquote, figure { margin-left: 40px; margin-right: 40px; }
    address { font-style: italic; }
    center { text-align: center; }

    h1, h2, h3, h4, h5, h6 { font-weight: bold; break-after: avoid; break-inside: avoid; }
    h1 { margin-top: 0.67em; margin-bottom: 0.67em; font-size: 2em; }
    h2 { margin-top: 0.83em; margin-bottom: 0.83em; font-size: 1.5em; }
    h3 { margin-top: 1em; margin-bottom: 1em; font-size: 1.17em; }
    h4 { margin-top: 1.33em; margin-bottom: 1.33em; font-size: 1em; }
    h5 { margin-top: 1.67em; margin-bottom: 1.67em; font-size: 0.83em; }
    h6 { margin-top: 2.33em; margin-bottom: 2.33em; font-size: 0.67em; }
    hgroup > h1, hgroup > h2, hgroup > h3, hgroup > h4, hgroup > h5, hgroup > h6, hgroup > p {
      margin-top: 0; margin-bottom: 0;
    }

    dd { margin-left: 40px; }
    dir, menu, ol, ul { padding-left: 40px; }
    :is(dir, dl, menu, ol, ul) :is(dir, dl, menu, ol, ul) { margin-top: 0; margin-bottom: 0; }
    ol { list-style-type: decimal; }
    ul, menu, dir { list-style-type: disc; }
    :is(ol, ul, menu, dir) :is(ul, menu, dir) { list-style-type: circle; }
    :is(ol, ul, menu, dir) :is(ol, ul, menu, dir) :is(ul, menu, dir) { list-style-type: square; }
    ol, ul, menu { counter-reset: list-item; }
    li { display: list-item; }

    table { display: table; box-sizing: border-box; text-indent: 0; border-collapse: separate; border-spacing: 2px; }
    caption { display: table-caption; text-align: center; }
    colgroup { display: table-column-group; }
    col { display: table-column; }
    thead { display: table-header-group; vertical-align: middle; }
    tbody { display: table-row-group; vertical-align: middle; }
    tfoot { display: table-footer-group; vertical-align: middle; }
    tr { display: table-row; vertical-align: inherit; }
    td, th { display: table-cell; padding: 1px; vertical-align: inherit; }
    th { font-weight: bold; text-align: -internal-center; }

    hr {
      color: gray; border-style: inset; border-width: 1px; margin: 0.5em auto; overflow: hidden;
    }

    pre, listing, xmp, plaintext { white-space: pre; font-family: monospace; }
    code, kbd, samp, tt { font-family: monospace; }
    em, i, cite, var, dfn { font-style: italic; }
    b, strong { font-weight: bolder; }
    u, ins { text-decoration: underline; }
    s, strike, del { text-decoration: line-through; }
    sub { vertical-align: sub; font-size: smaller; }
    sup { vertical-align: super; font-size: smaller; }
    small { font-size: smaller; }
    big { font-size: larger; }
    mark { background-color: yellow; color: black; }
    nobr { white-space: nowrap; }
    bdi { unicode-bidi: isolate; }
    bdo { unicode-bidi: bidi-override; }
    /* Markers keep lining-width figures and their own case whatever the item's text does (HTML's UA sheet). */
    ::marker { font-variant-numeric: tabular-nums; text-transform: none; }
    q::before { content: open-quote; }
    q::after { content: close-quote; }
    /* A forced line break, expressed in CSS so layout needs no tag names. */
    br::before { content: "\A"; white-space: pre; }
    wbr::before { content: "\200B"; }

    /* Ruby: each rt is set at half size above the base text before it; rp is for readers without ruby. */
    ruby { display: ruby; }
    rt { display: ruby-text; font-size: 50%; }
    rp { display: none; }

    iframe { border: 2px inset; }
    video, img, svg, canvas, object, embed { display: inline; }
    legend { padding-left: 2px; padding-right: 2px; }
    fieldset { margin-left: 2px; margin-right: 2px; border: 2px groove; padding: 0.35em 0.75em 0.625em; }

    /* Presentation MathML, the part that sets as text (after MathML Core's sheet): scripts raised
       and lowered, fences drawn; one-letter identifiers are italic (a hint, see Cascade.mathHints).
       Fractions, roots and tables are not stacked: their parts follow each other on the line. */
    m|math { font-style: normal; font-weight: normal; text-indent: 0; }
    m|math[display="block" i] { display: block; text-align: center; margin: 0.5em 0; }
    m|msup > :nth-child(2), m|msubsup > :nth-child(3), m|mover > :nth-child(2) { vertical-align: super; font-size: 71%; }
    m|msub > :nth-child(2), m|msubsup > :nth-child(2), m|munder > :nth-child(2) { vertical-align: sub; font-size: 71%; }
    m|mfenced::before { content: "("; }
    m|mfenced::after { content: ")"; }
    m|mfenced[open]::before { content: attr(open); }
    m|mfenced[close]::after { content: attr(close); }
    m|mfrac > :nth-child(2)::before { content: "/"; }
    m|msqrt::before { content: "√"; }
    m|annotation, m|annotation-xml, m|none, m|mprescripts { display: none; }
    """#
}
