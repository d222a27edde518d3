#ifndef QUIRE_SCALER_H
#define QUIRE_SCALER_H
#include <stdint.h>
#include <stdio.h>

// Box downscaling on the fly: each source pixel adds its premultiplied value to exactly one target
// pixel, and a target row is written out when the source moves past it. Memory is one target row.
typedef struct {
    int src_width, src_height, width, height;
    uint64_t *sums;      // width × 4 (a, r, g, b)
    uint32_t *counts;    // width
    int *column;         // src_width → target column
    int row;             // target row being accumulated, -1 before the first
    uint8_t *out;
    int stride;
} Scaler;

int scaler_init(Scaler *s, int src_width, int src_height, int width, int height, uint8_t *out, int stride);
/// `channels` 3 (RGB) or 4 (RGBA, straight alpha).
void scaler_push(Scaler *s, int y, const uint8_t *row, int channels);
void scaler_finish(Scaler *s);
void scaler_free(Scaler *s);
/// A whole RGBA frame (straight alpha, `row_bytes` apart) box-averaged into `out`: 0, or -1 out of memory.
int scaler_scale_frame(const uint8_t *pixels, size_t row_bytes, int src_width, int src_height, int width, int height,
                       uint8_t *out, int stride);

#define QUIRE_ERROR(buffer, capacity, ...) \
    do { if ((buffer) && (capacity)) snprintf((buffer), (capacity), __VA_ARGS__); } while (0)

#endif
