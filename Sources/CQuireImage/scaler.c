#include "scaler.h"
#include <stdlib.h>
#include <string.h>

int scaler_init(Scaler *s, int src_width, int src_height, int width, int height, uint8_t *out, int stride) {
    memset(s, 0, sizeof *s);
    if (width < 1 || height < 1 || width > src_width || height > src_height) return -1;
    s->src_width = src_width;
    s->src_height = src_height;
    s->width = width;
    s->height = height;
    s->out = out;
    s->stride = stride;
    s->row = -1;
    s->sums = calloc((size_t)width * 4, sizeof(uint64_t));
    s->counts = calloc((size_t)width, sizeof(uint32_t));
    s->column = malloc((size_t)src_width * sizeof(int));
    if (!s->sums || !s->counts || !s->column) {
        scaler_free(s);
        return -1;
    }
    for (int x = 0; x < src_width; x++) s->column[x] = (int)((int64_t)x * width / src_width);
    return 0;
}

static void flush(Scaler *s) {
    if (s->row < 0) return;
    uint32_t *dst = (uint32_t *)(s->out + (size_t)s->row * (size_t)s->stride);
    for (int x = 0; x < s->width; x++) {
        uint64_t n = s->counts[x];
        uint64_t *sum = s->sums + (size_t)x * 4;
        uint32_t a = 0, r = 0, g = 0, b = 0;
        if (n) {
            a = (uint32_t)((sum[0] + n / 2) / n);
            r = (uint32_t)((sum[1] + n / 2) / n);
            g = (uint32_t)((sum[2] + n / 2) / n);
            b = (uint32_t)((sum[3] + n / 2) / n);
        }
        dst[x] = (a << 24) | (r << 16) | (g << 8) | b;
    }
    memset(s->sums, 0, (size_t)s->width * 4 * sizeof(uint64_t));
    memset(s->counts, 0, (size_t)s->width * sizeof(uint32_t));
}

void scaler_push(Scaler *s, int y, const uint8_t *row, int channels) {
    if (y < 0 || y >= s->src_height) return;
    int target = (int)((int64_t)y * s->height / s->src_height);
    if (target != s->row) {
        flush(s);
        s->row = target;
    }
    for (int x = 0; x < s->src_width; x++) {
        const uint8_t *p = row + (size_t)x * (size_t)channels;
        uint32_t a = channels == 4 ? p[3] : 255;
        uint64_t *sum = s->sums + (size_t)s->column[x] * 4;
        sum[0] += a;
        if (a == 255) {
            sum[1] += p[0];
            sum[2] += p[1];
            sum[3] += p[2];
        } else if (a) {
            sum[1] += (p[0] * a + 127) / 255;
            sum[2] += (p[1] * a + 127) / 255;
            sum[3] += (p[2] * a + 127) / 255;
        }
        s->counts[s->column[x]]++;
    }
}

void scaler_finish(Scaler *s) {
    flush(s);
    s->row = -1;
}

void scaler_free(Scaler *s) {
    free(s->sums);
    free(s->counts);
    free(s->column);
    s->sums = NULL;
    s->counts = NULL;
    s->column = NULL;
}

void quire_image_free(void *pointer) { free(pointer); }

void quire_orient(const uint8_t *src, int src_width, int src_height, int src_stride, int orientation,
                  uint8_t *dst, int dst_stride) {
    int transposed = orientation >= 5 && orientation <= 8;
    int width = transposed ? src_height : src_width;
    int height = transposed ? src_width : src_height;
    for (int y = 0; y < height; y++) {
        uint32_t *out = (uint32_t *)(dst + (size_t)y * (size_t)dst_stride);
        for (int x = 0; x < width; x++) {
            int sx, sy;
            switch (orientation) {
            case 2: sx = src_width - 1 - x; sy = y; break;
            case 3: sx = src_width - 1 - x; sy = src_height - 1 - y; break;
            case 4: sx = x; sy = src_height - 1 - y; break;
            case 5: sx = y; sy = x; break;
            case 6: sx = y; sy = src_height - 1 - x; break;
            case 7: sx = src_width - 1 - y; sy = src_height - 1 - x; break;
            case 8: sx = src_width - 1 - y; sy = x; break;
            default: sx = x; sy = y; break;
            }
            out[x] = ((const uint32_t *)(src + (size_t)sy * (size_t)src_stride))[sx];
        }
    }
}

int scaler_scale_frame(const uint8_t *pixels, size_t row_bytes, int src_width, int src_height, int width, int height,
                       uint8_t *out, int stride) {
    Scaler scaler;
    if (scaler_init(&scaler, src_width, src_height, width, height, out, stride) != 0) return -1;
    for (int y = 0; y < src_height; y++) scaler_push(&scaler, y, pixels + (size_t)y * row_bytes, 4);
    scaler_finish(&scaler);
    scaler_free(&scaler);
    return 0;
}
