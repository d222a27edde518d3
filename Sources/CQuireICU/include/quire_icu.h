#ifndef QUIRE_ICU_H
#define QUIRE_ICU_H
#include <stdint.h>

// Swift sees ICU's C API only under version-suffixed names, so these thin wrappers expose the few
// calls Quire needs under stable names.

/// UAX #14 line-break opportunities for UTF-16 `text`. Writes each break offset (0 < offset <= length)
/// to `offsets` and 1 in `mandatory` when the break is forced (a hard line break).
/// Returns the number of breaks, or -1 on an ICU error. `capacity` must be at least length + 1.
int32_t quire_line_breaks(const uint16_t *text, int32_t length, const char *locale,
                          int32_t *offsets, uint8_t *mandatory, int32_t capacity);

/// The same opportunities as flags: sets `flags[offset]` to 1 for each break offset (`flags` holds
/// length + 1 bytes). Returns the number of breaks, or -1 on an ICU error.
int32_t quire_line_break_flags(const uint16_t *text, int32_t length, const char *locale, uint8_t *flags);
/// The same from ICU's rule engine alone (`quire_line_break_flags` answers the usual paragraph of
/// Latin letters and punctuation from tables; the tests compare the two).
int32_t quire_line_break_flags_icu(const uint16_t *text, int32_t length, const char *locale, uint8_t *flags);
/* CSS word-break over flags from quire_line_break_flags: rule 1 break-all, 2 keep-all. */
void quire_apply_word_break(const uint16_t *text, int32_t length, int32_t rule, uint8_t *flags);

/// The ICU script code (UScriptCode) of a code point: 0 common, 1 inherited, 25 Latin, 17 Han, …
int32_t quire_script(uint32_t codepoint);

/// UAX #50 Vertical_Orientation: 0 rotated (R), 1 upright (U), 2 transformed upright (Tu),
/// 3 transformed rotated (Tr: a vertical form from the font, else rotated).
int32_t quire_vertical_orientation(uint32_t codepoint);

/// 1 when the code point has the Unicode Default_Ignorable_Code_Point property.
int32_t quire_is_default_ignorable(uint32_t codepoint);

/// ICU's simple case mappings for text-transform (full mappings through u_strToUpper/Lower).
/// Returns the output length in UTF-16 units, or -1 on error/overflow.
int32_t quire_to_upper(const uint16_t *src, int32_t length, uint16_t *dst, int32_t capacity, const char *locale);
int32_t quire_to_lower(const uint16_t *src, int32_t length, uint16_t *dst, int32_t capacity, const char *locale);

/// Text folded for case- and diacritic-insensitive search: each code point decomposed (NFD), its
/// nonspacing marks dropped and the rest case-folded (full folding: ß → ss). For each folded unit,
/// `starts` and `ends` give the source code point's UTF-16 range in `text`. Returns the folded
/// length; -2 when more than `capacity` units would be written (retry with more), -1 on an ICU
/// error.
int32_t quire_search_fold(const uint16_t *text, int32_t length, uint16_t *folded, int32_t *starts, int32_t *ends, int32_t capacity);

#endif
