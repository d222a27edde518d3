#include "quire_image.h"
#include "scaler.h"
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    jmp_buf jump;
    const uint8_t *data;
    size_t size, position;
    char *error;
    size_t capacity;
} ReadContext;

static void on_error(png_structp png, png_const_charp message) {
    ReadContext *context = (ReadContext *)png_get_error_ptr(png);
    QUIRE_ERROR(context->error, context->capacity, "PNG: %s", message);
    longjmp(context->jump, 1);
}

static void on_warning(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

static void on_read(png_structp png, png_bytep out, size_t length) {
    ReadContext *context = (ReadContext *)png_get_io_ptr(png);
    if (context->size - context->position < length) png_error(png, "truncated data");
    memcpy(out, context->data + context->position, length);
    context->position += length;
}

int quire_png_decode(const uint8_t *data, size_t size, int width, int height, long max_buffer_pixels,
                     uint8_t *out, int stride, char *error, size_t error_capacity) {
    ReadContext context = {.data = data, .size = size, .error = error, .capacity = error_capacity};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &context, on_error, on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        if (png) png_destroy_read_struct(&png, NULL, NULL);
        QUIRE_ERROR(error, error_capacity, "libpng could not allocate");
        return QUIRE_IMAGE_NO_MEMORY;
    }
    // Volatile: these change after setjmp and are freed on the error path.
    uint8_t *volatile row = NULL;
    uint8_t *volatile image = NULL;
    png_bytep *volatile rows = NULL;
    Scaler scaler = {0};
    Scaler *volatile active = NULL;
    if (setjmp(context.jump)) {
        if (active) scaler_free(active);
        free(row);
        free(image);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        return QUIRE_IMAGE_BAD_DATA;
    }
    png_set_read_fn(png, &context, on_read);
    png_read_info(png, info);
    png_uint_32 src_width = 0, src_height = 0;
    int depth = 0, color = 0, interlace = 0;
    png_get_IHDR(png, info, &src_width, &src_height, &depth, &color, &interlace, NULL, NULL);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    int has_alpha = (color & PNG_COLOR_MASK_ALPHA) != 0;
    if (png_get_valid(png, info, PNG_INFO_tRNS)) {
        png_set_tRNS_to_alpha(png);
        has_alpha = 1;
    }
    if (depth == 16) png_set_scale_16(png);
    if (!(color & PNG_COLOR_MASK_COLOR)) png_set_gray_to_rgb(png);
    if (!has_alpha) png_set_filler(png, 0xFF, PNG_FILLER_AFTER);
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)src_width * 4) png_error(png, "unexpected row layout");
    if (scaler_init(&scaler, (int)src_width, (int)src_height, width, height, out, stride) != 0) {
        png_error(png, "bad target size");
    }
    active = &scaler;
    if (passes > 1) {
        // Adam7 needs every pass before any row is final: a full-size buffer, within a limit.
        if ((long)src_width * (long)src_height > max_buffer_pixels) {
            QUIRE_ERROR(error, error_capacity, "interlaced PNG of %ux%u is larger than %ld pixels",
                        (unsigned)src_width, (unsigned)src_height, max_buffer_pixels);
            scaler_free(&scaler);
            png_destroy_read_struct(&png, &info, NULL);
            return QUIRE_IMAGE_TOO_LARGE;
        }
        image = malloc((size_t)src_width * 4 * src_height);
        rows = malloc(sizeof(png_bytep) * src_height);
        if (!image || !rows) png_error(png, "out of memory");
        for (png_uint_32 y = 0; y < src_height; y++) rows[y] = image + (size_t)y * src_width * 4;
        png_read_image(png, rows);
        for (png_uint_32 y = 0; y < src_height; y++) scaler_push(&scaler, (int)y, rows[y], 4);
    } else {
        row = malloc((size_t)src_width * 4);
        if (!row) png_error(png, "out of memory");
        for (png_uint_32 y = 0; y < src_height; y++) {
            png_read_row(png, row, NULL);
            scaler_push(&scaler, (int)y, row, 4);
        }
    }
    scaler_finish(&scaler);
    scaler_free(&scaler);
    free(row);
    free(image);
    free(rows);
    png_destroy_read_struct(&png, &info, NULL);
    return QUIRE_IMAGE_OK;
}
