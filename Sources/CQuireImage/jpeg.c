#include "quire_image.h"
#include "scaler.h"
#include <jpeglib.h>
#include <jerror.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char *error;
    size_t capacity;
    int premature_end;
} ErrorContext;

static void on_error(j_common_ptr cinfo) {
    ErrorContext *context = (ErrorContext *)cinfo->err;
    char message[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, message);
    QUIRE_ERROR(context->error, context->capacity, "JPEG: %s", message);
    longjmp(context->jump, 1);
}

// Warnings (extraneous bytes, bad Huffman codes) are tolerated as browsers do; running out of data
// before the last scanline is not: the rest of the picture would be invented grey.
static void on_message(j_common_ptr cinfo, int level) {
    ErrorContext *context = (ErrorContext *)cinfo->err;
    if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) context->premature_end = 1;
}

int quire_jpeg_decode(const uint8_t *data, size_t size, int width, int height, long max_memory,
                      uint8_t *out, int stride, char *error, size_t error_capacity) {
    struct jpeg_decompress_struct cinfo;
    ErrorContext context = {.error = error, .capacity = error_capacity};
    cinfo.err = jpeg_std_error(&context.manager);
    context.manager.error_exit = on_error;
    context.manager.emit_message = on_message;
    uint8_t *volatile row = NULL;
    Scaler scaler = {0};
    Scaler *volatile active = NULL;
    if (setjmp(context.jump)) {
        if (active) scaler_free(active);
        free(row);
        jpeg_destroy_decompress(&cinfo);
        return QUIRE_IMAGE_BAD_DATA;
    }
    jpeg_create_decompress(&cinfo);
    if (max_memory > 0) cinfo.mem->max_memory_to_use = max_memory;
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    int cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
    // Adobe applications write CMYK inverted and say so with an APP14 "Adobe" marker.
    int inverted = cmyk && cinfo.saw_Adobe_marker;
    cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    for (int numerator = 1; numerator <= 8; numerator++) {
        cinfo.scale_num = (unsigned)numerator;
        cinfo.scale_denom = 8;
        jpeg_calc_output_dimensions(&cinfo);
        if ((int)cinfo.output_width >= width && (int)cinfo.output_height >= height) break;
    }
    jpeg_start_decompress(&cinfo);
    int src_width = (int)cinfo.output_width, src_height = (int)cinfo.output_height;
    int components = cinfo.output_components;
    if (scaler_init(&scaler, src_width, src_height, width, height, out, stride) != 0) {
        QUIRE_ERROR(error, error_capacity, "JPEG: cannot scale %dx%d to %dx%d", src_width, src_height, width, height);
        jpeg_destroy_decompress(&cinfo);
        return QUIRE_IMAGE_BAD_DATA;
    }
    active = &scaler;
    row = malloc((size_t)src_width * (size_t)(components > 3 ? components : 3));
    if (!row) {
        scaler_free(&scaler);
        jpeg_destroy_decompress(&cinfo);
        QUIRE_ERROR(error, error_capacity, "JPEG: out of memory");
        return QUIRE_IMAGE_NO_MEMORY;
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        int y = (int)cinfo.output_scanline;
        JSAMPROW rows[1] = {row};
        if (jpeg_read_scanlines(&cinfo, rows, 1) != 1) break;
        if (context.premature_end) break;
        if (cmyk) {
            // In place: CMYK 4 bytes → RGB 3 bytes, front to back never overwrites unread input.
            for (int x = 0; x < src_width; x++) {
                uint32_t c = row[x * 4], m = row[x * 4 + 1], yl = row[x * 4 + 2], k = row[x * 4 + 3];
                if (!inverted) {
                    c = 255 - c; m = 255 - m; yl = 255 - yl; k = 255 - k;
                }
                row[x * 3] = (uint8_t)((c * k + 127) / 255);
                row[x * 3 + 1] = (uint8_t)((m * k + 127) / 255);
                row[x * 3 + 2] = (uint8_t)((yl * k + 127) / 255);
            }
        }
        scaler_push(&scaler, y, row, 3);
    }
    int truncated = context.premature_end || cinfo.output_scanline < cinfo.output_height;
    scaler_finish(&scaler);
    scaler_free(&scaler);
    free(row);
    jpeg_destroy_decompress(&cinfo);
    if (truncated) {
        QUIRE_ERROR(error, error_capacity, "JPEG: premature end of data");
        return QUIRE_IMAGE_BAD_DATA;
    }
    return QUIRE_IMAGE_OK;
}

int quire_jpeg_encode(const uint8_t *rgb, int width, int height, int quality, int progressive, int color,
                      int orientation, int dpi, uint8_t **out, size_t *out_size) {
    int cmyk = color == 1 || color == 2;
    struct jpeg_compress_struct cinfo;
    ErrorContext context = {0};
    cinfo.err = jpeg_std_error(&context.manager);
    context.manager.error_exit = on_error;
    unsigned char *volatile buffer = NULL;
    unsigned long length = 0;
    uint8_t *volatile row = NULL;
    *out = NULL;
    *out_size = 0;
    if (setjmp(context.jump)) {
        jpeg_destroy_compress(&cinfo);
        free(buffer);
        free(row);
        return -1;
    }
    jpeg_create_compress(&cinfo);
    unsigned char *destination = NULL;
    jpeg_mem_dest(&cinfo, &destination, &length);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = cmyk ? 4 : 3;
    cinfo.in_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    if (color == 2) jpeg_set_colorspace(&cinfo, JCS_YCCK);
    if (color == 3) jpeg_set_colorspace(&cinfo, JCS_GRAYSCALE);
    jpeg_set_quality(&cinfo, quality, TRUE);
    if (progressive) jpeg_simple_progression(&cinfo);
    if (dpi > 0) {
        cinfo.density_unit = 1;
        cinfo.X_density = (UINT16)dpi;
        cinfo.Y_density = (UINT16)dpi;
    }
    jpeg_start_compress(&cinfo, TRUE);
    if (orientation > 0) {
        // "Exif\0\0", little-endian TIFF header, IFD0 with one entry: Orientation (0x0112), SHORT, 1.
        const uint8_t exif[] = {'E', 'x', 'i', 'f', 0, 0, 'I', 'I', 42, 0, 8, 0, 0, 0, 1, 0,
                                0x12, 0x01, 3, 0, 1, 0, 0, 0, (uint8_t)orientation, 0, 0, 0, 0, 0, 0, 0};
        jpeg_write_marker(&cinfo, JPEG_APP0 + 1, exif, sizeof exif);
    }
    row = malloc((size_t)width * 4);
    while (cinfo.next_scanline < cinfo.image_height) {
        const uint8_t *source = rgb + (size_t)cinfo.next_scanline * (size_t)width * 3;
        if (cmyk) {
            // Naive RGB → CMYK with full black extraction, stored inverted as Adobe does.
            for (int x = 0; x < width; x++) {
                int r = source[x * 3], g = source[x * 3 + 1], b = source[x * 3 + 2];
                int max = r > g ? (r > b ? r : b) : (g > b ? g : b);
                int k = 255 - max;
                int c = max ? (max - r) * 255 / max : 0, m = max ? (max - g) * 255 / max : 0;
                int y = max ? (max - b) * 255 / max : 0;
                row[x * 4] = (uint8_t)(255 - c);
                row[x * 4 + 1] = (uint8_t)(255 - m);
                row[x * 4 + 2] = (uint8_t)(255 - y);
                row[x * 4 + 3] = (uint8_t)(255 - k);
            }
        } else {
            memcpy(row, source, (size_t)width * 3);
        }
        JSAMPROW rows[1] = {row};
        jpeg_write_scanlines(&cinfo, rows, 1);
    }
    jpeg_finish_compress(&cinfo);
    buffer = destination;
    jpeg_destroy_compress(&cinfo);
    free(row);
    *out = buffer;
    *out_size = length;
    return 0;
}
