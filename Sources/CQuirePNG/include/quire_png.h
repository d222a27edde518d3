#ifndef QUIRE_PNG_H
#define QUIRE_PNG_H
#include <stdint.h>
#include <stddef.h>

// libpng reports errors with longjmp, which Swift cannot catch, so PNG writing lives here.
// The pixel loops that turn cairo surfaces into output rows are here too: they are the hot path.

/// Writes an 8-bit PNG. `channels` is 1 (grey) or 3 (RGB). `level` is the zlib level (1–9);
/// filters are off (NONE), which with a low level is several times faster than cairo's writer.
/// Returns 0, or -1 with a message in `error`.
int quire_png_write(const char *path, const uint8_t *pixels, int width, int height, int stride,
                    int channels, int level, char *error, size_t error_capacity);

/// cairo RGB24/ARGB32 (native-endian 0xAARRGGBB words) to packed RGB bytes.
void quire_xrgb_to_rgb(const uint8_t *src, int src_stride, uint8_t *dst, int width, int height);

/// cairo RGB24 to 8-bit grey (Rec. 601 luma). With `levels` 2–16 the result is quantised to that
/// many levels with an 8×8 ordered (Bayer) dither, deterministic and independent per pixel.
void quire_xrgb_to_gray(const uint8_t *src, int src_stride, uint8_t *dst, int width, int height, int levels);

/// The render hot path: cairo RGB24 rows packed into PNG rows and compressed in one call by
/// libdeflate (`level` on its 1–12 scale) into one IDAT chunk. `gray_levels` 0 writes RGB, or
/// exact 8-bit grey when no pixel has colour (lossless, a third of the bytes); 256 grey; 2–16
/// dithered grey as quire_xrgb_to_gray.
/// The rows come in bands, top to bottom, so a page can be painted a band at a time (no surface
/// of the whole page). They are kept in the calling thread's scratch: one PNG at a time per
/// thread, begun, added to and written on that thread.
typedef struct {
    int width, height, gray_levels, level;
    int rows;    // rows added so far
    int gray;    // the rows are 8-bit grey (RGB once a coloured pixel was seen)
    int failed;  // 1: memory ran out; 2: the thread's scratch was taken (another PNG begun, or another thread)
    unsigned long ticket;  // which PNG holds the thread's scratch
} quire_png_rows;

/// Starts a PNG of `height` rows; -1 when memory runs out (writing then reports it).
int quire_png_rows_begin(quire_png_rows *png, int width, int height, int gray_levels, int level);

/// Adds the next `count` rows (rows past `height` are ignored).
void quire_png_rows_add(quire_png_rows *png, const uint8_t *src, int src_stride, int count);

/// Compresses the rows into a file at `path`: 0, or -1 with a message in `error` (also when fewer
/// than `height` rows were added).
int quire_png_rows_write(quire_png_rows *png, const char *path, char *error, size_t error_capacity);

/// quire_png_rows_write into memory: on success `*out` is malloc'd (the caller frees) with
/// `*out_size` bytes, the same bytes the file would hold.
int quire_png_rows_encode(quire_png_rows *png, uint8_t **out, size_t *out_size, char *error, size_t error_capacity);

/// Reads a PNG as 8-bit grey (channels 1) or RGB (channels 3; palettes and alpha are flattened
/// onto white), rows packed. On success `*pixels` is malloc'd (caller frees) and 0 is returned;
/// otherwise -1 with a message in `error`. For tests and tools, not the render path.
/// With `as_rgb`, grey images are expanded to RGB (channels 3).
int quire_png_read(const char *path, int as_rgb, uint8_t **pixels, int *width, int *height, int *channels,
                   char *error, size_t error_capacity);

#endif
