#include "quire_icu.h"
#include <string.h>
#include <unicode/ubrk.h>
#include <unicode/uscript.h>
#include <unicode/uchar.h>
#include <unicode/ustring.h>

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

int32_t quire_line_break_flags(const uint16_t *text, int32_t length, const char *locale, uint8_t *flags) {
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
