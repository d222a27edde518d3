#ifndef QUIRE_IMAGE_H
#define QUIRE_IMAGE_H
#include <stddef.h>
#include <stdint.h>

// libpng and libjpeg report errors with longjmp, which Swift cannot catch, so decoding lives here.
// Every decoder writes premultiplied ARGB32 (cairo's native-endian 0xAARRGGBB words) into a buffer
// the caller owns, at exactly `width` × `height` (never larger than the source), box-averaging
// rows as they arrive so a large image is never held at full size when the format allows it.

enum {
    QUIRE_IMAGE_OK = 0,
    QUIRE_IMAGE_BAD_DATA = -1,
    QUIRE_IMAGE_UNSUPPORTED = -2,
    QUIRE_IMAGE_TOO_LARGE = -3,
    QUIRE_IMAGE_NO_MEMORY = -4,
};

/// PNG of any colour type and depth. Interlaced images need a full-size buffer, refused above `max_buffer_pixels`.
int quire_png_decode(const uint8_t *data, size_t size, int width, int height, long max_buffer_pixels,
                     uint8_t *out, int stride, char *error, size_t error_capacity);

/// JPEG (baseline, progressive, grey, RGB, CMYK, YCCK) with DCT scaling to the smallest scale that covers
/// the target. `max_memory` bounds libjpeg's own allocations (progressive JPEGs keep all coefficients).
int quire_jpeg_decode(const uint8_t *data, size_t size, int width, int height, long max_memory,
                      uint8_t *out, int stride, char *error, size_t error_capacity);

/// GIF, first frame composited on the logical screen; transparent elsewhere.
int quire_gif_decode(const uint8_t *data, size_t size, int width, int height, long max_buffer_pixels,
                     uint8_t *out, int stride, char *error, size_t error_capacity);

/// WebP (lossy, lossless, alpha; first frame of an animation), scaled by libwebp while decoding.
int quire_webp_decode(const uint8_t *data, size_t size, int width, int height, uint8_t *out, int stride,
                      char *error, size_t error_capacity);

/// AVIF (libavif with the system's AV1 decoder), first frame; converted at full size, so refused above `max_buffer_pixels`.
int quire_avif_decode(const uint8_t *data, size_t size, int width, int height, long max_buffer_pixels,
                      uint8_t *out, int stride, char *error, size_t error_capacity);

/// JPEG XL (libjxl), first frame; decoded at full size, so refused above `max_buffer_pixels`.
int quire_jxl_decode(const uint8_t *data, size_t size, int width, int height, long max_buffer_pixels,
                     uint8_t *out, int stride, char *error, size_t error_capacity);

/// Applies EXIF orientation 1–8. `dst` is `src_width` × `src_height`, or transposed for 5–8.
void quire_orient(const uint8_t *src, int src_width, int src_height, int src_stride, int orientation,
                  uint8_t *dst, int dst_stride);

// Encoders for tests: images generated at test time, no external tools needed.

/// JPEG from packed RGB. `color` 0 stores YCbCr, 1 Adobe (inverted) CMYK of the same colours, 2 YCCK,
/// 3 greyscale; `orientation` > 0
/// adds an EXIF APP1 with that tag; `dpi` > 0 writes JFIF density in dots per inch. Free with `quire_image_free`.
int quire_jpeg_encode(const uint8_t *rgb, int width, int height, int quality, int progressive, int color,
                      int orientation, int dpi, uint8_t **out, size_t *out_size);

/// WebP from packed RGBA (lossless when `quality` < 0). Free with `quire_image_free`.
int quire_webp_encode(const uint8_t *rgba, int width, int height, float quality, uint8_t **out, size_t *out_size);

void quire_image_free(void *pointer);

#endif
