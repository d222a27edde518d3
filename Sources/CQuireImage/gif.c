#include "quire_image.h"
#include "scaler.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    const uint8_t *data;
    size_t size, position;
} Reader;

static int byte_at(Reader *r) { return r->position < r->size ? r->data[r->position++] : -1; }

static int u16_at(Reader *r) {
    int lo = byte_at(r), hi = byte_at(r);
    return (lo < 0 || hi < 0) ? -1 : lo | (hi << 8);
}

/// Skips a chain of data sub-blocks; -1 when the data ends first.
static int skip_blocks(Reader *r) {
    for (;;) {
        int length = byte_at(r);
        if (length < 0) return -1;
        if (length == 0) return 0;
        if (r->size - r->position < (size_t)length) return -1;
        r->position += (size_t)length;
    }
}

/// LZW-decodes the image data sub-blocks into `indices` (count bytes). Returns pixels written or -1.
static long lzw_decode(Reader *r, int min_code_size, uint8_t *indices, long count) {
    static const int max_codes = 4096;
    uint16_t prefix[4096];
    uint8_t suffix[4096];
    uint8_t stack[4097];
    int clear = 1 << min_code_size, end = clear + 1;
    int code_size = min_code_size + 1, next = clear + 2, old = -1, first = 0;
    for (int i = 0; i < clear; i++) {
        prefix[i] = 0;
        suffix[i] = (uint8_t)i;
    }
    uint32_t bits = 0;
    int bit_count = 0, block_left = 0, done = 0;
    long written = 0;
    for (;;) {
        while (bit_count < code_size && !done) {
            if (block_left == 0) {
                block_left = byte_at(r);
                if (block_left < 0) return -1;
                if (block_left == 0) {
                    done = 1;  // terminator: no more data for this image
                    break;
                }
            }
            int b = byte_at(r);
            if (b < 0) return -1;
            block_left--;
            bits |= (uint32_t)b << bit_count;
            bit_count += 8;
        }
        if (bit_count < code_size) break;
        int code = (int)(bits & ((1u << code_size) - 1));
        bits >>= code_size;
        bit_count -= code_size;
        if (code == clear) {
            code_size = min_code_size + 1;
            next = clear + 2;
            old = -1;
            continue;
        }
        if (code == end) break;
        if (old < 0) {
            if (code >= clear) return -1;
            if (written < count) indices[written++] = (uint8_t)code;
            old = first = code;
            continue;
        }
        int in = code, depth = 0;
        if (code >= next) {
            if (code > next) return -1;
            stack[depth++] = (uint8_t)first;
            code = old;
        }
        while (code >= clear) {
            stack[depth++] = suffix[code];
            code = prefix[code];
        }
        first = suffix[code];
        stack[depth++] = (uint8_t)first;
        while (depth > 0 && written < count) indices[written++] = stack[--depth];
        if (next < max_codes) {
            prefix[next] = (uint16_t)old;
            suffix[next] = (uint8_t)first;
            next++;
            if (next == (1 << code_size) && code_size < 12) code_size++;
        }
        old = in;
    }
    // Skip whatever sub-blocks remain after the end code.
    if (!done && block_left > 0) {
        if (r->size - r->position < (size_t)block_left) return -1;
        r->position += (size_t)block_left;
        if (skip_blocks(r) < 0) return -1;
    }
    return written;
}

int quire_gif_decode(const uint8_t *data, size_t size, int width, int height, long max_buffer_pixels,
                     uint8_t *out, int stride, char *error, size_t error_capacity) {
    Reader r = {data, size, 0};
    if (size < 13 || memcmp(data, "GIF", 3) != 0) {
        QUIRE_ERROR(error, error_capacity, "GIF: not a GIF");
        return QUIRE_IMAGE_BAD_DATA;
    }
    r.position = 6;
    int screen_width = u16_at(&r), screen_height = u16_at(&r);
    int flags = byte_at(&r);
    byte_at(&r);  // background colour: browsers draw it transparent
    byte_at(&r);  // pixel aspect ratio
    uint8_t global[768];
    int global_count = 0;
    if (flags & 0x80) {
        global_count = 1 << ((flags & 7) + 1);
        if (r.size - r.position < (size_t)global_count * 3) goto truncated;
        memcpy(global, data + r.position, (size_t)global_count * 3);
        r.position += (size_t)global_count * 3;
    }
    int transparent = -1;
    for (;;) {
        int block = byte_at(&r);
        if (block < 0) goto truncated;
        if (block == 0x3B) {
            QUIRE_ERROR(error, error_capacity, "GIF: no image");
            return QUIRE_IMAGE_BAD_DATA;
        }
        if (block == 0x21) {
            int label = byte_at(&r);
            if (label == 0xF9) {
                int length = byte_at(&r);
                if (length < 4 || r.size - r.position < (size_t)length) goto truncated;
                if (data[r.position] & 1) transparent = data[r.position + 3];
                r.position += (size_t)length;
            }
            if (label < 0 || skip_blocks(&r) < 0) goto truncated;
            continue;
        }
        if (block != 0x2C) {
            QUIRE_ERROR(error, error_capacity, "GIF: unexpected block 0x%02x", block);
            return QUIRE_IMAGE_BAD_DATA;
        }
        int left = u16_at(&r), top = u16_at(&r), frame_width = u16_at(&r), frame_height = u16_at(&r);
        int frame_flags = byte_at(&r);
        if (frame_flags < 0) goto truncated;
        uint8_t local[768];
        const uint8_t *palette = global;
        int palette_count = global_count;
        if (frame_flags & 0x80) {
            palette_count = 1 << ((frame_flags & 7) + 1);
            if (r.size - r.position < (size_t)palette_count * 3) goto truncated;
            memcpy(local, data + r.position, (size_t)palette_count * 3);
            r.position += (size_t)palette_count * 3;
            palette = local;
        }
        if (screen_width == 0 || screen_height == 0) {
            screen_width = frame_width;
            screen_height = frame_height;
        }
        if (screen_width <= 0 || screen_height <= 0) {
            QUIRE_ERROR(error, error_capacity, "GIF: empty image");
            return QUIRE_IMAGE_BAD_DATA;
        }
        long pixels = (long)frame_width * frame_height;
        if (pixels > max_buffer_pixels || (long)screen_width * screen_height > max_buffer_pixels) {
            QUIRE_ERROR(error, error_capacity, "GIF: %dx%d is larger than %ld pixels", frame_width, frame_height,
                        max_buffer_pixels);
            return QUIRE_IMAGE_TOO_LARGE;
        }
        int min_code_size = byte_at(&r);
        if (min_code_size < 0) goto truncated;
        if (min_code_size < 1 || min_code_size > 11) {
            QUIRE_ERROR(error, error_capacity, "GIF: bad LZW code size %d", min_code_size);
            return QUIRE_IMAGE_BAD_DATA;
        }
        uint8_t *indices = malloc(pixels > 0 ? (size_t)pixels : 1);
        int *source_row = malloc(sizeof(int) * (size_t)(frame_height > 0 ? frame_height : 1));
        uint8_t *row = malloc((size_t)screen_width * 4);
        Scaler scaler;
        if (!indices || !source_row || !row || scaler_init(&scaler, screen_width, screen_height, width, height, out, stride) != 0) {
            free(indices);
            free(source_row);
            free(row);
            QUIRE_ERROR(error, error_capacity, "GIF: out of memory or bad target size");
            return QUIRE_IMAGE_NO_MEMORY;
        }
        // Short data leaves the rest transparent, as browsers do.
        memset(indices, transparent >= 0 ? transparent : 0, pixels > 0 ? (size_t)pixels : 1);
        long written = lzw_decode(&r, min_code_size, indices, pixels);
        if (written < 0 || (written == 0 && pixels > 0)) {
            free(indices);
            free(source_row);
            free(row);
            scaler_free(&scaler);
            QUIRE_ERROR(error, error_capacity, "GIF: corrupt or truncated image data");
            return QUIRE_IMAGE_BAD_DATA;
        }
        // Interlaced rows arrive in four passes: map each picture row to its place in the stream.
        if (frame_flags & 0x40) {
            static const int starts[4] = {0, 4, 2, 1}, steps[4] = {8, 8, 4, 2};
            int stream = 0;
            for (int pass = 0; pass < 4; pass++) {
                for (int y = starts[pass]; y < frame_height; y += steps[pass]) source_row[y] = stream++;
            }
        } else {
            for (int y = 0; y < frame_height; y++) source_row[y] = y;
        }
        for (int y = 0; y < screen_height; y++) {
            memset(row, 0, (size_t)screen_width * 4);
            int fy = y - top;
            if (fy >= 0 && fy < frame_height) {
                const uint8_t *line = indices + (size_t)source_row[fy] * (size_t)frame_width;
                for (int fx = 0; fx < frame_width; fx++) {
                    int x = left + fx;
                    if (x >= screen_width) break;
                    int index = line[fx];
                    if (index == transparent || index >= palette_count) continue;
                    uint8_t *p = row + (size_t)x * 4;
                    p[0] = palette[index * 3];
                    p[1] = palette[index * 3 + 1];
                    p[2] = palette[index * 3 + 2];
                    p[3] = 255;
                }
            }
            scaler_push(&scaler, y, row, 4);
        }
        scaler_finish(&scaler);
        scaler_free(&scaler);
        free(indices);
        free(source_row);
        free(row);
        return QUIRE_IMAGE_OK;
    }
truncated:
    QUIRE_ERROR(error, error_capacity, "GIF: truncated data");
    return QUIRE_IMAGE_BAD_DATA;
}
