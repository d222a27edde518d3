#include "quire_icu.h"
#include <pthread.h>
#include <string.h>
#include <unicode/ubrk.h>
#include <unicode/uscript.h>
#include <unicode/uchar.h>
#include <unicode/ustring.h>
#include <unicode/unorm2.h>
#include <unicode/utf16.h>

// Opening a line-break iterator loads rule data and is costly, so each thread keeps one per locale.
static __thread UBreakIterator *cached_iterator = NULL;
static __thread char cached_locale[32] = {0};

/// The thread's line-break iterator for `locale`, set on `text` (NULL on an ICU error). Callers
/// iterate from ubrk_first and then call release_line_iterator.
static UBreakIterator *line_iterator(const uint16_t *text, int32_t length, const char *locale) {
    UErrorCode status = U_ZERO_ERROR;
    const char *wanted = locale ? locale : "";
    if (cached_iterator == NULL || strncmp(cached_locale, wanted, sizeof(cached_locale) - 1) != 0) {
        if (cached_iterator) ubrk_close(cached_iterator);
        cached_iterator = ubrk_open(UBRK_LINE, wanted, NULL, 0, &status);
        if (U_FAILURE(status)) { cached_iterator = NULL; return NULL; }
        strncpy(cached_locale, wanted, sizeof(cached_locale) - 1);
    }
    ubrk_setText(cached_iterator, (const UChar *)text, length, &status);
    return U_FAILURE(status) ? NULL : cached_iterator;
}

/// Leaves no pointer into the caller's buffer behind.
static void release_line_iterator(UBreakIterator *iterator) {
    UErrorCode status = U_ZERO_ERROR;
    ubrk_setText(iterator, NULL, 0, &status);
}

int32_t quire_line_breaks(const uint16_t *text, int32_t length, const char *locale,
                          int32_t *offsets, uint8_t *mandatory, int32_t capacity) {
    UBreakIterator *iterator = line_iterator(text, length, locale);
    if (!iterator) return -1;
    int32_t count = 0;
    ubrk_first(iterator);
    for (int32_t position = ubrk_next(iterator); position != UBRK_DONE; position = ubrk_next(iterator)) {
        if (count >= capacity) {
            release_line_iterator(iterator);
            return -1;
        }
        int32_t rule = ubrk_getRuleStatus(iterator);
        offsets[count] = position;
        mandatory[count] = (rule >= UBRK_LINE_HARD && rule < UBRK_LINE_HARD_LIMIT) ? 1 : 0;
        count++;
    }
    release_line_iterator(iterator);
    return count;
}

/* The usual paragraph of a European book is letters, spaces and a little punctuation, and for
 * those ICU's rule engine (a quarter of a microsecond per break, several percent of a book's
 * layout) answers what a pair table answers: whether a line may break between two characters
 * depends only on the non-space character before the break, whether spaces come between, and the
 * character after it. The tables are asked of ICU itself once per process, so they follow its
 * rules; the one rule that looks further back (a hyphen after a space or at the start is a
 * word-initial hyphen, not broken after) is left to ICU, as is any text with a character outside
 * the set, a CJK locale (whose rules treat quotes by context) or a keyword (strictness). The
 * tests compare both paths on random text over the set and on every corpus book's map. */
enum { FAST_LIMIT = 0x2070, FAST_CLASSES = 24 };
static uint8_t fast_class[FAST_LIMIT];  /* 0: left to ICU */
static uint8_t fast_direct[FAST_CLASSES][FAST_CLASSES];
static uint8_t fast_spaced[FAST_CLASSES][FAST_CLASSES];
static int fast_ready = 0;
static pthread_once_t fast_once = PTHREAD_ONCE_INIT;

/* ICU's opportunities for a short probe, as flags (flags holds length + 1 bytes). */
static int icu_probe(UBreakIterator *iterator, const uint16_t *text, int32_t length, uint8_t *flags) {
    UErrorCode status = U_ZERO_ERROR;
    memset(flags, 0, (size_t)length + 1);
    ubrk_setText(iterator, (const UChar *)text, length, &status);
    if (U_FAILURE(status)) return 0;
    ubrk_first(iterator);
    for (int32_t position = ubrk_next(iterator); position != UBRK_DONE; position = ubrk_next(iterator))
        if (position >= 0 && position <= length) flags[position] = 1;
    return 1;
}

static void build_fast_tables(void) {
    /* Characters are grouped by line-break class, opening and closing quotes apart. */
    static const uint16_t punctuation[] = {0x20, ',', '.', ':', ';', '!', '?', '\'', '"', '(', ')', '[', ']', '-', '/', '&',
        '*', 0x2018, 0x2019, 0x201C, 0x201D, 0x2013, 0x2014, 0x2026, 0x2060, 0xA0, 0xAD};
    uint16_t members[64 + 52 + sizeof punctuation / sizeof punctuation[0]];
    int count = 0;
    for (int c = 'A'; c <= 'Z'; c++) members[count++] = (uint16_t)c;
    for (int c = 'a'; c <= 'z'; c++) members[count++] = (uint16_t)c;
    for (int c = 0xC0; c <= 0xFF; c++)
        if (c != 0xD7 && c != 0xF7) members[count++] = (uint16_t)c;
    for (size_t i = 0; i < sizeof punctuation / sizeof punctuation[0]; i++) members[count++] = punctuation[i];
    int keys[FAST_CLASSES];
    uint16_t representative[FAST_CLASSES];
    int classes = 0;
    for (int i = 0; i < count; i++) {
        uint16_t c = members[i];
        int type = u_charType(c);
        int key = u_getIntPropertyValue(c, UCHAR_LINE_BREAK) * 4 + (type == U_INITIAL_PUNCTUATION ? 1 : type == U_FINAL_PUNCTUATION ? 2 : 0);
        int found = 0;
        for (int k = 1; k <= classes; k++)
            if (keys[k] == key) found = k;
        if (!found) {
            if (classes + 1 >= FAST_CLASSES) return;
            found = ++classes;
            keys[found] = key;
            representative[found] = c;
        }
        fast_class[c] = (uint8_t)found;
    }
    UErrorCode status = U_ZERO_ERROR;
    UBreakIterator *iterator = ubrk_open(UBRK_LINE, "", NULL, 0, &status);
    if (U_FAILURE(status)) return;
    uint8_t flags[5];
    for (int x = 1; x <= classes; x++) {
        for (int y = 1; y <= classes; y++) {
            /* After a letter, so that x is not at the start of the text. */
            uint16_t adjacent[3] = {'a', representative[x], representative[y]};
            uint16_t spaced[4] = {'a', representative[x], 0x20, representative[y]};
            if (!icu_probe(iterator, adjacent, 3, flags)) goto done;
            fast_direct[x][y] = flags[2];
            if (!icu_probe(iterator, spaced, 4, flags)) goto done;
            fast_spaced[x][y] = flags[3];
        }
    }
    fast_ready = 1;
done:
    ubrk_close(iterator);
}

/* Whether the tables stand for `locale`'s rules: no keyword and not Chinese, Japanese or Korean. */
static int fast_locale(const char *locale) {
    if (!locale) return 1;
    if (strchr(locale, '@')) return 0;
    return strncmp(locale, "zh", 2) != 0 && strncmp(locale, "ja", 2) != 0 && strncmp(locale, "ko", 2) != 0
        && strncmp(locale, "yue", 3) != 0;
}

/* The flags from the tables, or -1 (flags untouched) when the text is left to ICU. */
static int32_t fast_line_break_flags(const uint16_t *text, int32_t length, const char *locale, uint8_t *flags) {
    if (length <= 0 || !fast_locale(locale)) return -1;
    pthread_once(&fast_once, build_fast_tables);
    if (!fast_ready) return -1;
    for (int32_t i = 0; i < length; i++) {
        uint16_t unit = text[i];
        if (unit >= FAST_LIMIT || fast_class[unit] == 0) return -1;
        if (unit == '-' && (i == 0 || text[i - 1] == 0x20)) return -1;
    }
    if (text[0] == 0x20) return -1;
    int before = fast_class[text[0]];
    int spaces = 0;
    int32_t count = 1;
    for (int32_t i = 1; i < length; i++) {
        uint16_t unit = text[i];
        if (unit == 0x20) {
            spaces = 1;
            continue;
        }
        int now = fast_class[unit];
        uint8_t allowed = spaces ? fast_spaced[before][now] : fast_direct[before][now];
        flags[i] = allowed;
        count += allowed;
        before = now;
        spaces = 0;
    }
    flags[length] = 1;
    return count;
}

int32_t quire_line_break_flags(const uint16_t *text, int32_t length, const char *locale, uint8_t *flags) {
    int32_t fast = fast_line_break_flags(text, length, locale, flags);
    if (fast >= 0) return fast;
    return quire_line_break_flags_icu(text, length, locale, flags);
}

int32_t quire_line_break_flags_icu(const uint16_t *text, int32_t length, const char *locale, uint8_t *flags) {
    UBreakIterator *iterator = line_iterator(text, length, locale);
    if (!iterator) return -1;
    int32_t count = 0;
    ubrk_first(iterator);
    for (int32_t position = ubrk_next(iterator); position != UBRK_DONE; position = ubrk_next(iterator)) {
        if (position >= 0 && position <= length) flags[position] = 1;
        count++;
    }
    release_line_iterator(iterator);
    return count;
}

/* CSS word-break, which ICU 72 does not implement (it ignores the `lw=breakall` and `lw=keepall`
 * locale keywords). CSS Text 3 section 5.2: break-all treats letters and digits (AL, NU, SA, HL,
 * AI) as ideographs, so a line may end between any two of them; keep-all suppresses the soft
 * wrap opportunities between such letters and CJK characters. Combining marks and ZWJ stay with
 * the letter before them, and nothing is split inside a surrogate pair. */
static int word_break_letter(UChar32 c, int keep_all) {
    switch (u_getIntPropertyValue(c, UCHAR_LINE_BREAK)) {
    case U_LB_ALPHABETIC: case U_LB_NUMERIC: case U_LB_COMPLEX_CONTEXT: case U_LB_HEBREW_LETTER:
    case U_LB_AMBIGUOUS: case U_LB_IDEOGRAPHIC:
        return 1;
    case U_LB_H2: case U_LB_H3: case U_LB_JL: case U_LB_JV: case U_LB_JT: case U_LB_CONDITIONAL_JAPANESE_STARTER:
        return keep_all;
    default:
        return 0;
    }
}

void quire_apply_word_break(const uint16_t *text, int32_t length, int32_t rule, uint8_t *flags) {
    if (rule != 1 && rule != 2) return;
    int keep_all = rule == 2;
    int32_t index = 0;
    UChar32 previous = -1;
    while (index < length) {
        int32_t start = index;
        UChar32 c;
        U16_NEXT(text, index, length, c);
        if (previous >= 0 && word_break_letter(previous, keep_all) && word_break_letter(c, keep_all))
            flags[start] = keep_all ? 0 : 1;
        int8_t cls = (int8_t)u_getIntPropertyValue(c, UCHAR_LINE_BREAK);
        if (cls != U_LB_COMBINING_MARK && cls != U_LB_ZWJ) previous = c;
    }
}

int32_t quire_script(uint32_t codepoint) {
    UErrorCode status = U_ZERO_ERROR;
    UScriptCode script = uscript_getScript((UChar32)codepoint, &status);
    return U_FAILURE(status) ? 0 : (int32_t)script;
}

int32_t quire_vertical_orientation(uint32_t codepoint) {
    switch (u_getIntPropertyValue((UChar32)codepoint, UCHAR_VERTICAL_ORIENTATION)) {
    case U_VO_UPRIGHT: return 1;
    case U_VO_TRANSFORMED_UPRIGHT: return 2;
    case U_VO_TRANSFORMED_ROTATED: return 3;
    default: return 0;
    }
}

int32_t quire_is_default_ignorable(uint32_t codepoint) {
    return u_hasBinaryProperty((UChar32)codepoint, UCHAR_DEFAULT_IGNORABLE_CODE_POINT) ? 1 : 0;
}

int32_t quire_to_upper(const uint16_t *src, int32_t length, uint16_t *dst, int32_t capacity, const char *locale) {
    UErrorCode status = U_ZERO_ERROR;
    int32_t n = u_strToUpper((UChar *)dst, capacity, (const UChar *)src, length, locale, &status);
    return U_FAILURE(status) ? -1 : n;
}

int32_t quire_to_lower(const uint16_t *src, int32_t length, uint16_t *dst, int32_t capacity, const char *locale) {
    UErrorCode status = U_ZERO_ERROR;
    int32_t n = u_strToLower((UChar *)dst, capacity, (const UChar *)src, length, locale, &status);
    return U_FAILURE(status) ? -1 : n;
}

int32_t quire_search_fold(const uint16_t *text, int32_t length, uint16_t *folded, int32_t *starts, int32_t *ends, int32_t capacity) {
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2 *nfd = unorm2_getNFDInstance(&status);
    if (U_FAILURE(status)) return -1;
    int32_t count = 0;
    int32_t index = 0;
    while (index < length) {
        int32_t start = index;
        UChar32 codepoint;
        U16_NEXT(text, index, length, codepoint);
        if (codepoint < 0x80) {
            // ASCII folds to its lower case and has no decomposition.
            if (count >= capacity) return -2;
            folded[count] = (uint16_t)(codepoint >= 'A' && codepoint <= 'Z' ? codepoint + 32 : codepoint);
            starts[count] = start;
            ends[count] = index;
            count++;
            continue;
        }
        // The code point's canonical decomposition (itself when it has none).
        UChar decomposed[32];
        int32_t decomposedLength = unorm2_getDecomposition(nfd, codepoint, decomposed, 32, &status);
        if (U_FAILURE(status)) return -1;
        if (decomposedLength < 0) {
            decomposedLength = 0;
            U16_APPEND_UNSAFE(decomposed, decomposedLength, codepoint);
        }
        int32_t at = 0;
        while (at < decomposedLength) {
            UChar32 part;
            U16_NEXT(decomposed, at, decomposedLength, part);
            // Diacritics are the nonspacing marks a decomposition leaves (é → e + ◌́). A mark
            // belongs to the character before it: a match ending there takes the mark too.
            if (u_charType(part) == U_NON_SPACING_MARK) {
                for (int32_t last = count - 1; last >= 0 && starts[last] == starts[count - 1]; last--) ends[last] = index;
                continue;
            }
            UChar single[2];
            int32_t singleLength = 0;
            U16_APPEND_UNSAFE(single, singleLength, part);
            UChar caseFolded[8];
            int32_t foldedLength = u_strFoldCase(caseFolded, 8, single, singleLength, U_FOLD_CASE_DEFAULT, &status);
            if (U_FAILURE(status)) return -1;
            for (int32_t unit = 0; unit < foldedLength; unit++) {
                if (count >= capacity) return -2;
                folded[count] = caseFolded[unit];
                starts[count] = start;
                ends[count] = index;
                count++;
            }
        }
    }
    return count;
}
