#include "quire_png.h"
#include <errno.h>
#include <libdeflate.h>
#include <pthread.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    jmp_buf jump;
    char *error;
    size_t capacity;
} WriteContext;

static void on_error(png_structp png, png_const_charp message) {
    int saved = errno;
    WriteContext *context = (WriteContext *)png_get_error_ptr(png);
    if (context->error && context->capacity) {
        // libpng's own writer says only "Write Error": the system's reason (a full disk) is in errno.
        if (strcmp(message, "Write Error") == 0 && saved != 0) {
            snprintf(context->error, context->capacity, "%s", strerror(saved));
        } else {
            snprintf(context->error, context->capacity, "%s", message);
        }
    }
    longjmp(context->jump, 1);
}

static void on_warning(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

/// Makes libpng's write structs for an open `file`, reporting into `context`; -1 (with `error`
/// set and `file` closed) when that fails. The caller then sets its own setjmp point.
static int begin_write_file(FILE *file, WriteContext *context, png_structp *png, png_infop *info, char *error, size_t error_capacity) {
    *png = png_create_write_struct(PNG_LIBPNG_VER_STRING, context, on_error, on_warning);
    *info = *png ? png_create_info_struct(*png) : NULL;
    if (!*png || !*info) {
        if (*png) png_destroy_write_struct(png, NULL);
        fclose(file);
        if (error) snprintf(error, error_capacity, "libpng could not allocate");
        return -1;
    }
    return 0;
}

/// Opens `path` and makes the write structs; -1 (with `error` set and nothing left open) when either fails.
static int begin_write(const char *path, WriteContext *context, FILE **file, png_structp *png, png_infop *info,
                       char *error, size_t error_capacity) {
    *file = fopen(path, "wb");
    if (!*file) {
        if (error) snprintf(error, error_capacity, "cannot open %s for writing", path);
        return -1;
    }
    return begin_write_file(*file, context, png, info, error, error_capacity);
}

int quire_png_write(const char *path, const uint8_t *pixels, int width, int height, int stride,
                    int channels, int level, char *error, size_t error_capacity) {
    if (error && error_capacity) error[0] = 0;
    WriteContext context = {.error = error, .capacity = error_capacity};
    FILE *file;
    png_structp png;
    png_infop info;
    if (begin_write(path, &context, &file, &png, &info, error, error_capacity) != 0) return -1;
    if (setjmp(context.jump)) {
        png_destroy_write_struct(&png, &info);
        fclose(file);
        return -1;
    }
    png_init_io(png, file);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8,
                 channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, level);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
    png_write_info(png, info);
    for (int y = 0; y < height; y++) {
        png_write_row(png, (png_const_bytep)(pixels + (size_t)y * (size_t)stride));
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    if (fclose(file) != 0) {
        if (error) snprintf(error, error_capacity, "cannot finish writing %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int quire_png_read(const char *path, int as_rgb, uint8_t **pixels, int *width, int *height, int *channels,
                   char *error, size_t error_capacity) {
    if (error && error_capacity) error[0] = 0;
    *pixels = NULL;
    FILE *file = fopen(path, "rb");
    if (!file) {
        if (error) snprintf(error, error_capacity, "cannot open %s", path);
        return -1;
    }
    WriteContext context = {.error = error, .capacity = error_capacity};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &context, on_error, on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        if (png) png_destroy_read_struct(&png, NULL, NULL);
        fclose(file);
        return -1;
    }
    uint8_t *volatile buffer = NULL;
    if (setjmp(context.jump)) {
        free(buffer);
        png_destroy_read_struct(&png, &info, NULL);
        fclose(file);
        return -1;
    }
    png_init_io(png, file);
    png_read_info(png, info);
    png_set_expand(png);
    png_set_strip_16(png);
    if (as_rgb) png_set_gray_to_rgb(png);
    png_color_16 white = {.red = 0xFFFF, .green = 0xFFFF, .blue = 0xFFFF, .gray = 0xFFFF};
    png_set_background(png, &white, PNG_BACKGROUND_GAMMA_SCREEN, 0, 1.0);
    png_read_update_info(png, info);
    int w = (int)png_get_image_width(png, info), h = (int)png_get_image_height(png, info);
    int c = png_get_channels(png, info);
    if (c != 1 && c != 3) png_error(png, "unexpected channel count");
    buffer = malloc((size_t)w * (size_t)h * (size_t)c + 1);
    if (!buffer) png_error(png, "out of memory");
    for (int y = 0; y < h; y++) png_read_row(png, buffer + (size_t)y * (size_t)w * (size_t)c, NULL);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    fclose(file);
    *pixels = buffer;
    *width = w;
    *height = h;
    *channels = c;
    return 0;
}

/// One row of native-endian 0x00RRGGBB words as packed R, G, B bytes.
static void xrgb_row_to_rgb(const uint32_t *row, uint8_t *out, int width) {
    for (int x = 0; x < width; x++) {
        uint32_t pixel = row[x];
        out[0] = (uint8_t)(pixel >> 16);
        out[1] = (uint8_t)(pixel >> 8);
        out[2] = (uint8_t)pixel;
        out += 3;
    }
}

void quire_xrgb_to_rgb(const uint8_t *src, int src_stride, uint8_t *dst, int width, int height) {
    for (int y = 0; y < height; y++) {
        xrgb_row_to_rgb((const uint32_t *)(src + (size_t)y * (size_t)src_stride), dst + (size_t)y * (size_t)width * 3, width);
    }
}

static const uint8_t bayer8[8][8] = {
    {0, 32, 8, 40, 2, 34, 10, 42},   {48, 16, 56, 24, 50, 18, 58, 26},
    {12, 44, 4, 36, 14, 46, 6, 38},  {60, 28, 52, 20, 62, 30, 54, 22},
    {3, 35, 11, 43, 1, 33, 9, 41},   {51, 19, 59, 27, 49, 17, 57, 25},
    {15, 47, 7, 39, 13, 45, 5, 37},  {63, 31, 55, 23, 61, 29, 53, 21},
};

static void xrgb_row_to_gray(const uint32_t *row, uint8_t *out, int width, int y, int levels) {
    int quantise = levels >= 2 && levels < 256;
    int steps = quantise ? levels - 1 : 255;
    for (int x = 0; x < width; x++) {
        uint32_t pixel = row[x];
        uint32_t r = (pixel >> 16) & 0xFF, g = (pixel >> 8) & 0xFF, b = pixel & 0xFF;
        uint32_t luma = (r * 77 + g * 150 + b * 29 + 128) >> 8;
        if (quantise) {
            // Scale to [0, steps*64), add the threshold, then divide back down.
            uint32_t scaled = luma * (uint32_t)steps * 64 / 255;
            uint32_t level = (scaled + bayer8[y & 7][x & 7]) / 64;
            if (level > (uint32_t)steps) level = (uint32_t)steps;
            luma = level * 255 / (uint32_t)steps;
        }
        out[x] = (uint8_t)luma;
    }
}

/// `xrgb_rows_to_gray_if_gray` on any CPU.
static int xrgb_rows_to_gray_portable(const uint8_t *src, int src_stride, int width, int height, uint8_t *raw) {
    for (int y = 0; y < height; y++) {
        const uint32_t *row = (const uint32_t *)(src + (size_t)y * (size_t)src_stride);
        uint8_t *out = raw + (size_t)y * ((size_t)width + 1);
        *out++ = 0;
        uint32_t differs = 0;
        for (int x = 0; x < width; x++) {
            uint32_t pixel = row[x];
            differs |= ((pixel >> 16) ^ pixel) & 0xFF;
            differs |= ((pixel >> 8) ^ pixel) & 0xFF;
            out[x] = (uint8_t)pixel;
        }
        if (differs) return 0;
    }
    return 1;
}

#if defined(__x86_64__)
#include <immintrin.h>

/// The AVX2 form of `xrgb_rows_to_gray_portable`, 32 pixels a step: the same bytes, in a quarter
/// of the instructions (this pass reads every pixel of every page).
__attribute__((target("avx2")))
static int xrgb_rows_to_gray_avx2(const uint8_t *src, int src_stride, int width, int height, uint8_t *raw) {
    const __m256i low_byte = _mm256_set1_epi32(0xFF);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int y = 0; y < height; y++) {
        const uint32_t *row = (const uint32_t *)(src + (size_t)y * (size_t)src_stride);
        uint8_t *out = raw + (size_t)y * ((size_t)width + 1);
        *out++ = 0;
        __m256i differs = _mm256_setzero_si256();
        int x = 0;
        for (; x + 32 <= width; x += 32) {
            __m256i a = _mm256_loadu_si256((const __m256i *)(row + x));
            __m256i b = _mm256_loadu_si256((const __m256i *)(row + x + 8));
            __m256i c = _mm256_loadu_si256((const __m256i *)(row + x + 16));
            __m256i d = _mm256_loadu_si256((const __m256i *)(row + x + 24));
            // Blue against green and green against red, in the low 16 bits of each pixel.
            differs = _mm256_or_si256(differs, _mm256_xor_si256(a, _mm256_srli_epi32(a, 8)));
            differs = _mm256_or_si256(differs, _mm256_xor_si256(b, _mm256_srli_epi32(b, 8)));
            differs = _mm256_or_si256(differs, _mm256_xor_si256(c, _mm256_srli_epi32(c, 8)));
            differs = _mm256_or_si256(differs, _mm256_xor_si256(d, _mm256_srli_epi32(d, 8)));
            __m256i ab = _mm256_packus_epi32(_mm256_and_si256(a, low_byte), _mm256_and_si256(b, low_byte));
            __m256i cd = _mm256_packus_epi32(_mm256_and_si256(c, low_byte), _mm256_and_si256(d, low_byte));
            // The packs work within 128-bit lanes: put the four-pixel groups back in order.
            __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(ab, cd), order);
            _mm256_storeu_si256((__m256i *)(out + x), bytes);
        }
        uint32_t rest = 0;
        for (; x < width; x++) {
            uint32_t pixel = row[x];
            rest |= (pixel ^ (pixel >> 8)) & 0xFFFF;
            out[x] = (uint8_t)pixel;
        }
        if (!_mm256_testz_si256(differs, _mm256_set1_epi32(0xFFFF)) || rest) return 0;
    }
    return 1;
}
#endif

/// Writes the rows (each after its filter byte, NONE) as 8-bit grey while every pixel has equal
/// red, green and blue; 0 at the first that has not (what was written is then to be overwritten).
static int xrgb_rows_to_gray_if_gray(const uint8_t *src, int src_stride, int width, int height, uint8_t *raw) {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2")) return xrgb_rows_to_gray_avx2(src, src_stride, width, height, raw);
#endif
    return xrgb_rows_to_gray_portable(src, src_stride, width, height, raw);
}


void quire_xrgb_to_gray(const uint8_t *src, int src_stride, uint8_t *dst, int width, int height, int levels) {
    for (int y = 0; y < height; y++) {
        xrgb_row_to_gray((const uint32_t *)(src + (size_t)y * (size_t)src_stride), dst + (size_t)y * (size_t)width, width, y, levels);
    }
}

/// A PNG chunk: length, type, data and the CRC of type and data.
static int write_chunk(FILE *file, const char type[4], const uint8_t *data, size_t length) {
    uint8_t head[8] = {(uint8_t)(length >> 24), (uint8_t)(length >> 16), (uint8_t)(length >> 8), (uint8_t)length,
                       (uint8_t)type[0], (uint8_t)type[1], (uint8_t)type[2], (uint8_t)type[3]};
    uint32_t crc = libdeflate_crc32(0, head + 4, 4);
    if (length) crc = libdeflate_crc32(crc, data, length);
    uint8_t tail[4] = {(uint8_t)(crc >> 24), (uint8_t)(crc >> 16), (uint8_t)(crc >> 8), (uint8_t)crc};
    return fwrite(head, 1, 8, file) == 8 && (!length || fwrite(data, 1, length, file) == length) && fwrite(tail, 1, 4, file) == 4 ? 0 : -1;
}

/// What a thread keeps from one page to the next: the compressor (half a megabyte of match-finder
/// tables, set up again by each compression anyway) and the row and output buffers, so writing a
/// page allocates nothing. Freed when the thread ends.
typedef struct {
    struct libdeflate_compressor *compressor;
    int level;
    uint8_t *raw;
    size_t raw_capacity;
    uint8_t *packed;
    size_t packed_capacity;
    unsigned long ticket;  // the PNG whose rows `raw` holds
} Scratch;

/// Tickets for PNGs begun, unique across threads: a PNG whose ticket is not its thread's
/// scratch's (another begun since, or added to from another thread) fails instead of mixing rows.
static unsigned long tickets;

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static int scratch_key_made;

static void scratch_free(void *pointer) {
    Scratch *scratch = pointer;
    if (scratch->compressor) libdeflate_free_compressor(scratch->compressor);
    free(scratch->raw);
    free(scratch->packed);
    free(scratch);
}

static void scratch_make_key(void) { scratch_key_made = pthread_key_create(&scratch_key, scratch_free) == 0; }

/// This thread's scratch with a compressor at `level` and a row buffer of at least `raw_size`
/// bytes (what it held before is not kept); NULL when memory runs out.
static Scratch *scratch_for(int level, size_t raw_size) {
    pthread_once(&scratch_once, scratch_make_key);
    if (!scratch_key_made) return NULL;
    Scratch *scratch = pthread_getspecific(scratch_key);
    if (!scratch) {
        scratch = calloc(1, sizeof *scratch);
        if (!scratch) return NULL;
        if (pthread_setspecific(scratch_key, scratch) != 0) {
            free(scratch);
            return NULL;
        }
    }
    if (!scratch->compressor || scratch->level != level) {
        if (scratch->compressor) libdeflate_free_compressor(scratch->compressor);
        scratch->compressor = libdeflate_alloc_compressor(level);
        scratch->level = level;
        if (!scratch->compressor) return NULL;
    }
    if (scratch->raw_capacity < raw_size) {
        free(scratch->raw);
        scratch->raw = malloc(raw_size);
        scratch->raw_capacity = scratch->raw ? raw_size : 0;
        if (!scratch->raw) return NULL;
    }
    return scratch;
}

/// The scratch's output buffer, large enough for any compression of `raw_size` bytes.
static int scratch_reserve_packed(Scratch *scratch, size_t raw_size) {
    size_t bound = libdeflate_zlib_compress_bound(scratch->compressor, raw_size);
    if (scratch->packed_capacity < bound) {
        free(scratch->packed);
        scratch->packed = malloc(bound);
        scratch->packed_capacity = scratch->packed ? bound : 0;
        if (!scratch->packed) return -1;
    }
    return 0;
}

static size_t row_bytes(const quire_png_rows *png) { return (size_t)png->width * (png->gray ? 1 : 3) + 1; }

int quire_png_rows_begin(quire_png_rows *png, int width, int height, int gray_levels, int level) {
    // Rows start as 8-bit grey. Without `gray_levels` that is lossless while no pixel has colour
    // (text on white: a third of the bytes to compress); the first coloured pixel widens them to RGB.
    *png = (quire_png_rows){.width = width, .height = height, .gray_levels = gray_levels,
                            .level = level < 1 ? 1 : level > 12 ? 12 : level, .gray = 1};
    Scratch *scratch = scratch_for(png->level, row_bytes(png) * (size_t)(height > 0 ? height : 0));
    if (!scratch) {
        png->failed = 1;
        return -1;
    }
    png->ticket = scratch->ticket = __atomic_add_fetch(&tickets, 1, __ATOMIC_RELAXED);
    return 0;
}

/// The grey rows made so far as RGB rows (each grey value three times, what the RGB conversion
/// of a pixel with equal red, green and blue gives), in place when the buffer is large enough:
/// back to front, so no row is overwritten before it is read.
static int widen_to_rgb(Scratch *scratch, quire_png_rows *png) {
    size_t width = (size_t)png->width, gray_row = width + 1, rgb_row = 3 * width + 1;
    size_t needed = rgb_row * (size_t)png->height;
    uint8_t *raw = scratch->raw_capacity >= needed ? scratch->raw : malloc(needed);
    if (!raw) return -1;
    for (size_t y = (size_t)png->rows; y-- > 0;) {
        const uint8_t *from = scratch->raw + y * gray_row + 1;
        uint8_t *to = raw + y * rgb_row;
        for (size_t x = width; x-- > 0;) {
            uint8_t value = from[x];
            to[1 + 3 * x] = to[2 + 3 * x] = to[3 + 3 * x] = value;
        }
        to[0] = 0;  // filter NONE
    }
    if (raw != scratch->raw) {
        free(scratch->raw);
        scratch->raw = raw;
        scratch->raw_capacity = needed;
    }
    png->gray = 0;
    return 0;
}

/// This thread's scratch if it still holds `png`'s rows; NULL (and `png` failed) when not.
static Scratch *scratch_holding(quire_png_rows *png) {
    Scratch *scratch = scratch_key_made ? pthread_getspecific(scratch_key) : NULL;
    if (png->failed) return NULL;
    if (!scratch || scratch->ticket != png->ticket) {
        png->failed = 2;
        return NULL;
    }
    return scratch;
}

void quire_png_rows_add(quire_png_rows *png, const uint8_t *src, int src_stride, int count) {
    Scratch *scratch = scratch_holding(png);
    if (!scratch) return;
    if (count > png->height - png->rows) count = png->height - png->rows;
    if (count <= 0) return;
    size_t first = (size_t)png->rows;
    // The grey rows are written while the band is checked for colour (one pass over the pixels,
    // not two); a coloured pixel widens the rows already made and starts the band again as RGB.
    if (!png->gray_levels && png->gray
        && !xrgb_rows_to_gray_if_gray(src, src_stride, png->width, count, scratch->raw + first * row_bytes(png))
        && widen_to_rgb(scratch, png) != 0) {
        png->failed = 1;
        return;
    }
    if (png->gray_levels || !png->gray) {
        size_t bytes = row_bytes(png);
        for (int y = 0; y < count; y++) {
            const uint32_t *pixels = (const uint32_t *)(src + (size_t)y * (size_t)src_stride);
            uint8_t *out = scratch->raw + (first + (size_t)y) * bytes;
            *out++ = 0;  // filter NONE
            if (png->gray_levels) {
                xrgb_row_to_gray(pixels, out, png->width, png->rows + y, png->gray_levels);
            } else {
                xrgb_row_to_rgb(pixels, out, png->width);
            }
        }
    }
    png->rows += count;
}

/// The PNG of the rows into an open `file` (a file, or a memory stream), which it closes. The
/// rows (filter NONE) are compressed in one call by libdeflate, into a single IDAT chunk:
/// compression is most of a page's cost, and libdeflate's whole-buffer deflate is several times
/// faster than zlib's streaming one at a like ratio.
static int rows_write_file(quire_png_rows *png, FILE *file, const char *name, char *error, size_t error_capacity) {
    Scratch *scratch = scratch_holding(png);
    size_t raw_size = row_bytes(png) * (size_t)png->height;
    if (!scratch || scratch_reserve_packed(scratch, raw_size) != 0) {
        if (error) {
            snprintf(error, error_capacity, "%s", png->failed == 2 ? "another PNG was begun on this thread before this one was written"
                                                                   : "out of memory");
        }
        fclose(file);
        return -1;
    }
    if (png->rows != png->height) {
        if (error) snprintf(error, error_capacity, "%d of %d rows were painted", png->rows, png->height);
        fclose(file);
        return -1;
    }
    size_t packed_size = libdeflate_zlib_compress(scratch->compressor, scratch->raw, raw_size, scratch->packed, scratch->packed_capacity);
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    int width = png->width, height = png->height;
    uint8_t header[13] = {(uint8_t)(width >> 24), (uint8_t)(width >> 16), (uint8_t)(width >> 8), (uint8_t)width,
                          (uint8_t)(height >> 24), (uint8_t)(height >> 16), (uint8_t)(height >> 8), (uint8_t)height,
                          8, png->gray ? 0 : 2, 0, 0, 0};
    int failed = packed_size == 0 || fwrite(signature, 1, 8, file) != 8 || write_chunk(file, "IHDR", header, 13) != 0
        || write_chunk(file, "IDAT", scratch->packed, packed_size) != 0 || write_chunk(file, "IEND", NULL, 0) != 0;
    int saved = errno;
    if (fclose(file) != 0 || failed) {
        if (error) snprintf(error, error_capacity, "cannot write %s: %s", name, packed_size == 0 ? "compression failed" : strerror(saved ? saved : errno));
        return -1;
    }
    return 0;
}

int quire_png_rows_write(quire_png_rows *png, const char *path, char *error, size_t error_capacity) {
    if (error && error_capacity) error[0] = 0;
    FILE *file = fopen(path, "wb");
    if (!file) {
        if (error) snprintf(error, error_capacity, "cannot open %s for writing", path);
        return -1;
    }
    return rows_write_file(png, file, path, error, error_capacity);
}

int quire_png_rows_encode(quire_png_rows *png, uint8_t **out, size_t *out_size, char *error, size_t error_capacity) {
    if (error && error_capacity) error[0] = 0;
    char *buffer = NULL;
    size_t size = 0;
    *out = NULL;
    *out_size = 0;
    FILE *stream = open_memstream(&buffer, &size);
    if (!stream) {
        if (error) snprintf(error, error_capacity, "out of memory");
        return -1;
    }
    if (rows_write_file(png, stream, "a PNG in memory", error, error_capacity) != 0) {
        free(buffer);
        return -1;
    }
    *out = (uint8_t *)buffer;
    *out_size = size;
    return 0;
}
