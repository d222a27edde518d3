#include "quire_image.h"
#include "scaler.h"
#include <jxl/decode.h>
#include <quire_delay_load.h>
#include <stdlib.h>

// libjxl hands out whole frames, so the picture is decoded to RGBA at full size (refused above
// `max_buffer_pixels`, as interlaced PNG is) and box-averaged down to the drawn size, with straight
// alpha as the scaler expects. The stored orientation is kept, as the header parser reports the
// stored size: a JPEG XL whose header asks for a turn is drawn unturned (not handled yet).
int quire_jxl_decode(const uint8_t *data, size_t size, int width, int height, long max_buffer_pixels,
                     uint8_t *out, int stride, char *error, size_t error_capacity) {
    // libjxl is opened on first use (Sources/CQuireDelayLoad).
    char reason[256];
    if (!quire_load_jxl(reason, sizeof reason)) {
        QUIRE_ERROR(error, error_capacity, "JPEG XL: libjxl cannot be loaded (%s)", reason);
        return QUIRE_IMAGE_UNSUPPORTED;
    }
    JxlDecoder *decoder = JxlDecoderCreate(NULL);
    if (!decoder) {
        QUIRE_ERROR(error, error_capacity, "JPEG XL: out of memory");
        return QUIRE_IMAGE_NO_MEMORY;
    }
    JxlPixelFormat format = {4, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    uint8_t *pixels = NULL;
    size_t src_width = 0, src_height = 0;
    int result = QUIRE_IMAGE_BAD_DATA;
    int done = 0;
    if (JxlDecoderSubscribeEvents(decoder, JXL_DEC_BASIC_INFO | JXL_DEC_FULL_IMAGE) != JXL_DEC_SUCCESS ||
        JxlDecoderSetKeepOrientation(decoder, JXL_TRUE) != JXL_DEC_SUCCESS ||
        JxlDecoderSetUnpremultiplyAlpha(decoder, JXL_TRUE) != JXL_DEC_SUCCESS ||
        JxlDecoderSetInput(decoder, data, size) != JXL_DEC_SUCCESS) {
        QUIRE_ERROR(error, error_capacity, "JPEG XL: decoder set-up failed");
        JxlDecoderDestroy(decoder);
        return QUIRE_IMAGE_UNSUPPORTED;
    }
    JxlDecoderCloseInput(decoder);
    while (!done) {
        JxlDecoderStatus status = JxlDecoderProcessInput(decoder);
        switch (status) {
        case JXL_DEC_BASIC_INFO: {
            JxlBasicInfo info;
            if (JxlDecoderGetBasicInfo(decoder, &info) != JXL_DEC_SUCCESS) {
                QUIRE_ERROR(error, error_capacity, "JPEG XL: unreadable header");
                done = 1;
                break;
            }
            src_width = info.xsize;
            src_height = info.ysize;
            if ((long)src_width * (long)src_height > max_buffer_pixels) {
                QUIRE_ERROR(error, error_capacity, "JPEG XL of %zux%zu is larger than %ld pixels", src_width, src_height,
                            max_buffer_pixels);
                result = QUIRE_IMAGE_TOO_LARGE;
                done = 1;
            }
            break;
        }
        case JXL_DEC_NEED_IMAGE_OUT_BUFFER: {
            size_t needed = 0;
            if (JxlDecoderImageOutBufferSize(decoder, &format, &needed) != JXL_DEC_SUCCESS ||
                needed != src_width * src_height * 4 || !(pixels = malloc(needed))) {
                QUIRE_ERROR(error, error_capacity, "JPEG XL: cannot allocate the frame");
                result = QUIRE_IMAGE_NO_MEMORY;
                done = 1;
                break;
            }
            if (JxlDecoderSetImageOutBuffer(decoder, &format, pixels, needed) != JXL_DEC_SUCCESS) {
                QUIRE_ERROR(error, error_capacity, "JPEG XL: output buffer refused");
                done = 1;
            }
            break;
        }
        case JXL_DEC_FULL_IMAGE: {
            // The first frame is the picture (an animation shows its first frame, as GIF does).
            if (scaler_scale_frame(pixels, src_width * 4, (int)src_width, (int)src_height, width, height, out, stride) == 0) {
                result = QUIRE_IMAGE_OK;
            } else {
                QUIRE_ERROR(error, error_capacity, "JPEG XL: out of memory");
                result = QUIRE_IMAGE_NO_MEMORY;
            }
            done = 1;
            break;
        }
        case JXL_DEC_SUCCESS:
            QUIRE_ERROR(error, error_capacity, "JPEG XL: no frame");
            done = 1;
            break;
        case JXL_DEC_NEED_MORE_INPUT:
            QUIRE_ERROR(error, error_capacity, "JPEG XL: truncated data");
            done = 1;
            break;
        default:
            QUIRE_ERROR(error, error_capacity, "JPEG XL: corrupt data");
            done = 1;
            break;
        }
    }
    free(pixels);
    JxlDecoderDestroy(decoder);
    return result;
}
