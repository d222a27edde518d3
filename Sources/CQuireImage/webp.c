#include "quire_image.h"
#include "scaler.h"
#include <stdlib.h>
#include <string.h>
#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>

// libwebp's premultiplied BGRA is cairo's ARGB32 word on a little-endian machine.
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NATIVE_ARGB MODE_bgrA
#else
#define NATIVE_ARGB MODE_Argb
#endif

static int decode_into(const uint8_t *data, size_t size, int width, int height, uint8_t *out, int stride,
                       size_t out_size, char *error, size_t error_capacity) {
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) {
        QUIRE_ERROR(error, error_capacity, "WebP: library version mismatch");
        return QUIRE_IMAGE_UNSUPPORTED;
    }
    VP8StatusCode status = WebPGetFeatures(data, size, &config.input);
    if (status == VP8_STATUS_OK) {
        if (width != config.input.width || height != config.input.height) {
            config.options.use_scaling = 1;
            config.options.scaled_width = width;
            config.options.scaled_height = height;
        }
        config.output.colorspace = NATIVE_ARGB;
        config.output.is_external_memory = 1;
        config.output.u.RGBA.rgba = out;
        config.output.u.RGBA.stride = stride;
        config.output.u.RGBA.size = out_size;
        status = WebPDecode(data, size, &config);
        WebPFreeDecBuffer(&config.output);
    }
    if (status == VP8_STATUS_OK) return QUIRE_IMAGE_OK;
    static const char *const reasons[] = {"ok", "out of memory", "invalid parameter", "corrupt data",
                                          "unsupported feature", "suspended", "user abort", "truncated data"};
    QUIRE_ERROR(error, error_capacity, "WebP: %s", (unsigned)status < 8 ? reasons[status] : "error");
    return status == VP8_STATUS_OUT_OF_MEMORY ? QUIRE_IMAGE_NO_MEMORY
           : status == VP8_STATUS_UNSUPPORTED_FEATURE ? QUIRE_IMAGE_UNSUPPORTED
                                                      : QUIRE_IMAGE_BAD_DATA;
}

int quire_webp_decode(const uint8_t *data, size_t size, int width, int height, uint8_t *out, int stride,
                      char *error, size_t error_capacity) {
    WebPBitstreamFeatures features;
    if (WebPGetFeatures(data, size, &features) != VP8_STATUS_OK) {
        QUIRE_ERROR(error, error_capacity, "WebP: corrupt or truncated header");
        return QUIRE_IMAGE_BAD_DATA;
    }
    size_t out_size = (size_t)stride * (size_t)height;
    if (!features.has_animation) return decode_into(data, size, width, height, out, stride, out_size, error, error_capacity);

    // Animation: the first frame, scaled like the canvas and placed at its offset.
    WebPData whole = {data, size};
    WebPDemuxer *demux = WebPDemux(&whole);
    if (!demux) {
        QUIRE_ERROR(error, error_capacity, "WebP: corrupt animation");
        return QUIRE_IMAGE_BAD_DATA;
    }
    int canvas_width = (int)WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH);
    int canvas_height = (int)WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT);
    WebPIterator frame;
    int result = QUIRE_IMAGE_BAD_DATA;
    memset(out, 0, out_size);
    if (canvas_width > 0 && canvas_height > 0 && WebPDemuxGetFrame(demux, 1, &frame)) {
        int x = (int)((long)frame.x_offset * width / canvas_width);
        int y = (int)((long)frame.y_offset * height / canvas_height);
        int w = (int)(((long)frame.width * width + canvas_width / 2) / canvas_width);
        int h = (int)(((long)frame.height * height + canvas_height / 2) / canvas_height);
        if (w > width - x) w = width - x;
        if (h > height - y) h = height - y;
        if (w >= 1 && h >= 1) {
            uint8_t *origin = out + (size_t)y * (size_t)stride + (size_t)x * 4;
            result = decode_into(frame.fragment.bytes, frame.fragment.size, w, h, origin, stride,
                                 out_size - (size_t)(origin - out), error, error_capacity);
        } else {
            result = QUIRE_IMAGE_OK;
        }
        WebPDemuxReleaseIterator(&frame);
    } else {
        QUIRE_ERROR(error, error_capacity, "WebP: animation has no frame");
    }
    WebPDemuxDelete(demux);
    return result;
}

int quire_webp_encode(const uint8_t *rgba, int width, int height, float quality, uint8_t **out, size_t *out_size) {
    uint8_t *encoded = NULL;
    size_t size = quality < 0 ? WebPEncodeLosslessRGBA(rgba, width, height, width * 4, &encoded)
                              : WebPEncodeRGBA(rgba, width, height, width * 4, quality, &encoded);
    *out = NULL;
    *out_size = 0;
    if (size == 0) return -1;
    *out = malloc(size);
    if (*out) memcpy(*out, encoded, size);
    WebPFree(encoded);
    if (!*out) return -1;
    *out_size = size;
    return 0;
}
