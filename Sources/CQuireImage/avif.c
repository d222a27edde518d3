#include "quire_image.h"
#include "scaler.h"
#include <avif/avif.h>
#include <quire_delay_load.h>

// libavif decodes whole frames only, so the picture is converted to RGBA at full size (refused
// above `max_buffer_pixels`, as interlaced PNG is) and box-averaged down to the drawn size.
int quire_avif_decode(const uint8_t *data, size_t size, int width, int height, long max_buffer_pixels,
                      uint8_t *out, int stride, char *error, size_t error_capacity) {
    // libavif is opened on first use (Sources/CQuireDelayLoad).
    char reason[256];
    if (!quire_load_avif(reason, sizeof reason)) {
        QUIRE_ERROR(error, error_capacity, "AVIF: libavif cannot be loaded (%s)", reason);
        return QUIRE_IMAGE_UNSUPPORTED;
    }
    avifDecoder *decoder = avifDecoderCreate();
    if (!decoder) {
        QUIRE_ERROR(error, error_capacity, "AVIF: out of memory");
        return QUIRE_IMAGE_NO_MEMORY;
    }
    decoder->maxThreads = 1;  // Quire decodes pictures on its own workers; the result must not vary
    decoder->strictFlags = AVIF_STRICT_DISABLED;
    decoder->ignoreExif = AVIF_TRUE;
    decoder->ignoreXMP = AVIF_TRUE;
    decoder->imageSizeLimit = max_buffer_pixels > 0 && max_buffer_pixels < AVIF_DEFAULT_IMAGE_SIZE_LIMIT
                                  ? (uint32_t)max_buffer_pixels
                                  : AVIF_DEFAULT_IMAGE_SIZE_LIMIT;
    int result = QUIRE_IMAGE_BAD_DATA;
    avifResult status = avifDecoderSetIOMemory(decoder, data, size);
    if (status == AVIF_RESULT_OK) status = avifDecoderParse(decoder);
    if (status == AVIF_RESULT_OK) status = avifDecoderNextImage(decoder);
    if (status != AVIF_RESULT_OK) {
        QUIRE_ERROR(error, error_capacity, "AVIF: %s", avifResultToString(status));
        result = status == AVIF_RESULT_NO_CODEC_AVAILABLE ? QUIRE_IMAGE_UNSUPPORTED
                 : status == AVIF_RESULT_OUT_OF_MEMORY    ? QUIRE_IMAGE_NO_MEMORY
                                                          : QUIRE_IMAGE_BAD_DATA;
        avifDecoderDestroy(decoder);
        return result;
    }
    const avifImage *image = decoder->image;
    int src_width = (int)image->width, src_height = (int)image->height;
    if ((long)src_width * (long)src_height > max_buffer_pixels) {
        QUIRE_ERROR(error, error_capacity, "AVIF of %dx%d is larger than %ld pixels", src_width, src_height, max_buffer_pixels);
        avifDecoderDestroy(decoder);
        return QUIRE_IMAGE_TOO_LARGE;
    }
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, image);
    rgb.format = AVIF_RGB_FORMAT_RGBA;
    rgb.depth = 8;
    avifRGBImageAllocatePixels(&rgb);
    if (!rgb.pixels) {
        QUIRE_ERROR(error, error_capacity, "AVIF: out of memory");
        avifDecoderDestroy(decoder);
        return QUIRE_IMAGE_NO_MEMORY;
    }
    status = avifImageYUVToRGB(image, &rgb);
    if (status == AVIF_RESULT_OK) {
        if (scaler_scale_frame(rgb.pixels, rgb.rowBytes, src_width, src_height, width, height, out, stride) == 0) {
            result = QUIRE_IMAGE_OK;
        } else {
            QUIRE_ERROR(error, error_capacity, "AVIF: out of memory");
            result = QUIRE_IMAGE_NO_MEMORY;
        }
    } else {
        QUIRE_ERROR(error, error_capacity, "AVIF: %s", avifResultToString(status));
    }
    avifRGBImageFreePixels(&rgb);
    avifDecoderDestroy(decoder);
    return result;
}
