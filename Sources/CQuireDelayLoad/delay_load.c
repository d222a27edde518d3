// Delay-load stubs. Each stub has the exact name and prototype of the library function (this file
// includes the real headers and quire_delay_load.h, so a declaration that differs fails to
// compile). Quire's calls bind to these stubs at link time and the libraries are never linked; the
// first call opens the library with dlopen and looks the function up once.
#include "quire_delay_load.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <avif/avif.h>
#include <cairo-ft.h>
#include <cairo.h>
#include <jxl/decode.h>
#include <glib-object.h>
#include <librsvg/rsvg.h>
#include <poppler.h>

typedef struct {
    const char *names[2];  // the runtime soname first, then the development symlink
    const char *probe;     // a function the library must have: a wrong file under its name is refused
    pthread_once_t once;
    void *handle;
    char error[512];
    // The names of every stub of this library (a linker section of their own, see STUB): a library
    // that lacks one is refused when it is opened, so no stub can fail once it has loaded.
    const char *const *stubs_start;
    const char *const *stubs_stop;
} Library;

// Each stub's name sits in the section of its library; the linker marks where each section starts
// and stops. The references are strong: lld defines __start_/__stop_ only for a strong one (a weak
// one stayed 0, the tables were empty, and a library missing functions was taken).
#define STUB_TABLE(library)                                                                     \
    extern const char *const __start_quire_stubs_##library[];                                   \
    extern const char *const __stop_quire_stubs_##library[];
STUB_TABLE(cairo)
STUB_TABLE(poppler)
STUB_TABLE(rsvg)
STUB_TABLE(gobject)
STUB_TABLE(avif)
STUB_TABLE(jxl)

/// The first stub of `library` that the opened `handle` lacks, or NULL.
static const char *missing_stub(const Library *library, void *handle) {
    for (const char *const *name = library->stubs_start; name && name < library->stubs_stop; name++) {
        if (!dlsym(handle, *name)) return *name;
    }
    return NULL;
}

static void open_library(Library *library) {
    for (int i = 0; i < 2 && !library->handle; i++) {
        void *handle = dlopen(library->names[i], RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char *reason = dlerror();
            if (i == 0) snprintf(library->error, sizeof library->error, "%s", reason ? reason : library->names[i]);
        } else if (!dlsym(handle, library->probe)) {
            if (i == 0) snprintf(library->error, sizeof library->error, "%s has no %s", library->names[i], library->probe);
            dlclose(handle);
        } else if (missing_stub(library, handle)) {
            if (i == 0) snprintf(library->error, sizeof library->error, "%s has no %s", library->names[i], missing_stub(library, handle));
            dlclose(handle);
        } else {
            library->handle = handle;
        }
    }
}

static Library cairo = {{"libcairo.so.2", "libcairo.so"}, "cairo_create", PTHREAD_ONCE_INIT, NULL, "", __start_quire_stubs_cairo, __stop_quire_stubs_cairo};
static Library poppler = {{"libpoppler-glib.so.8", "libpoppler-glib.so"}, "poppler_document_new_from_file", PTHREAD_ONCE_INIT, NULL, "", __start_quire_stubs_poppler, __stop_quire_stubs_poppler};
static Library rsvg = {{"librsvg-2.so.2", "librsvg-2.so"}, "rsvg_handle_new_from_data", PTHREAD_ONCE_INIT, NULL, "", __start_quire_stubs_rsvg, __stop_quire_stubs_rsvg};
static Library gobject = {{"libgobject-2.0.so.0", "libgobject-2.0.so"}, "g_object_unref", PTHREAD_ONCE_INIT, NULL, "", __start_quire_stubs_gobject, __stop_quire_stubs_gobject};
// libavif and libjxl bring their codecs (dav1d, aom, rav1e, SVT-AV1, highway, brotli, abseil…):
// two dozen libraries whose loading and constructors (highway times the CPU's clock) cost every
// run a few milliseconds, for the rare book with such a picture.
static Library avif = {{"libavif.so.15", "libavif.so"}, "avifDecoderCreate", PTHREAD_ONCE_INIT, NULL, "", __start_quire_stubs_avif, __stop_quire_stubs_avif};
static Library jxl = {{"libjxl.so.0.7", "libjxl.so"}, "JxlDecoderCreate", PTHREAD_ONCE_INIT, NULL, "", __start_quire_stubs_jxl, __stop_quire_stubs_jxl};
static void open_avif(void) { open_library(&avif); }
static void open_jxl(void) { open_library(&jxl); }
static void open_cairo(void) { open_library(&cairo); }
static void open_poppler(void) { open_library(&poppler); }
static void open_rsvg(void) { open_library(&rsvg); }
static void open_gobject(void) { open_library(&gobject); }

static bool load(Library *library, void (*opener)(void), char *reason, size_t size) {
    pthread_once(&library->once, opener);
    if (!library->handle && reason && size) snprintf(reason, size, "%s", library->error);
    return library->handle != NULL;
}

bool quire_load_cairo(char *reason, size_t size) { return load(&cairo, open_cairo, reason, size); }
// poppler's and librsvg's objects are released through GObject, which both link.
bool quire_load_poppler(char *reason, size_t size) {
    return load(&poppler, open_poppler, reason, size) && load(&gobject, open_gobject, reason, size);
}
bool quire_load_avif(char *reason, size_t size) { return load(&avif, open_avif, reason, size); }
bool quire_load_jxl(char *reason, size_t size) { return load(&jxl, open_jxl, reason, size); }
bool quire_load_rsvg(char *reason, size_t size) { return load(&rsvg, open_rsvg, reason, size) && load(&gobject, open_gobject, reason, size); }

// Callers check quire_load_* first, and a library is loaded only when it has every stub's
// function (missing_stub), so this cannot fail for a caller that checked. Reaching the abort is a
// bug in Quire (a call without its quire_load_* check), not a condition of the machine.
static void *resolve(Library *library, void (*opener)(void), const char *name) {
    pthread_once(&library->once, opener);
    void *function = library->handle ? dlsym(library->handle, name) : NULL;
    if (!function) {
        fprintf(stderr, "quire: internal error: %s called before %s was loaded (%s)\n", name, library->names[0],
                library->handle ? "no such function" : library->error);
        abort();
    }
    return function;
}

// The looked-up pointer is published with release/acquire atomics: stubs are called from
// several worker threads at once.
// The release executable exports no symbols (RELEASE_FLAGS), so the libraries' calls to each
// other by these names go straight to each other. A build that exports them sends those calls
// through the stubs instead: still correct, as each stub looks its function up in its library's
// own handle, for one indirect call. (No library calls one of these functions while it is being
// opened, which would wait on its own pthread_once.)

// Declares `function`: `name` from `library`, looked up once.
#define RESOLVED(library, type, name)                                                          \
    static type resolved;                                                                      \
    type function = __atomic_load_n(&resolved, __ATOMIC_ACQUIRE);                              \
    if (!function) {                                                                           \
        function = (type)resolve(&library, open_##library, #name);                             \
        __atomic_store_n(&resolved, function, __ATOMIC_RELEASE);                               \
    }
// A stub's name goes into its library's section, for missing_stub.
#define STUB_NAME(library, name)                                                                \
    static const char *const quire_stub_name_##name __attribute__((used, section("quire_stubs_" #library))) = #name;
#define STUB(library, ret, name, params, args)                                                  \
    STUB_NAME(library, name)                                                                    \
    ret name params {                                                                          \
        RESOLVED(library, __typeof__(ret(*) params), name)                                     \
        return function args;                                                                  \
    }
#define STUB_VOID(library, name, params, args)                                                 \
    STUB_NAME(library, name)                                                                    \
    void name params {                                                                         \
        RESOLVED(library, __typeof__(void(*) params), name)                                    \
        function args;                                                                         \
    }

// cairo: the functions Quire calls (painting, PDF pages, SVG images, image buffers).
STUB_VOID(cairo, cairo_clip, (cairo_t *cr), (cr))
STUB(cairo, cairo_t *, cairo_create, (cairo_surface_t *target), (target))
STUB_VOID(cairo, cairo_destroy, (cairo_t *cr), (cr))
STUB_VOID(cairo, cairo_fill, (cairo_t *cr), (cr))
STUB_VOID(cairo, cairo_font_face_destroy, (cairo_font_face_t *font_face), (font_face))
STUB(cairo, cairo_font_face_t *, cairo_font_face_reference, (cairo_font_face_t *font_face), (font_face))
STUB(cairo, cairo_status_t, cairo_font_face_set_user_data, (cairo_font_face_t *font_face, const cairo_user_data_key_t *key, void *user_data, cairo_destroy_func_t destroy), (font_face, key, user_data, destroy))
STUB(cairo, cairo_font_options_t *, cairo_font_options_create, (void), ())
STUB_VOID(cairo, cairo_font_options_destroy, (cairo_font_options_t *options), (options))
STUB_VOID(cairo, cairo_font_options_set_antialias, (cairo_font_options_t *options, cairo_antialias_t antialias), (options, antialias))
STUB_VOID(cairo, cairo_font_options_set_hint_metrics, (cairo_font_options_t *options, cairo_hint_metrics_t hint_metrics), (options, hint_metrics))
STUB_VOID(cairo, cairo_font_options_set_hint_style, (cairo_font_options_t *options, cairo_hint_style_t hint_style), (options, hint_style))
STUB(cairo, int, cairo_format_stride_for_width, (cairo_format_t format, int width), (format, width))
STUB(cairo, cairo_font_face_t *, cairo_ft_font_face_create_for_ft_face, (FT_Face face, int load_flags), (face, load_flags))
STUB_VOID(cairo, cairo_ft_font_face_set_synthesize, (cairo_font_face_t *font_face, unsigned int synth_flags), (font_face, synth_flags))
STUB(cairo, cairo_pattern_t *, cairo_get_source, (cairo_t *cr), (cr))
STUB(cairo, cairo_surface_t *, cairo_image_surface_create, (cairo_format_t format, int width, int height), (format, width, height))
STUB(cairo, cairo_surface_t *, cairo_image_surface_create_for_data, (unsigned char *data, cairo_format_t format, int width, int height, int stride), (data, format, width, height, stride))
STUB(cairo, unsigned char *, cairo_image_surface_get_data, (cairo_surface_t *surface), (surface))
STUB(cairo, int, cairo_image_surface_get_height, (cairo_surface_t *surface), (surface))
STUB(cairo, int, cairo_image_surface_get_stride, (cairo_surface_t *surface), (surface))
STUB(cairo, int, cairo_image_surface_get_width, (cairo_surface_t *surface), (surface))
STUB_VOID(cairo, cairo_line_to, (cairo_t *cr, double x, double y), (cr, x, y))
STUB_VOID(cairo, cairo_move_to, (cairo_t *cr, double x, double y), (cr, x, y))
STUB_VOID(cairo, cairo_paint, (cairo_t *cr), (cr))
STUB_VOID(cairo, cairo_paint_with_alpha, (cairo_t *cr, double alpha), (cr, alpha))
STUB_VOID(cairo, cairo_pattern_set_extend, (cairo_pattern_t *pattern, cairo_extend_t extend), (pattern, extend))
STUB_VOID(cairo, cairo_pattern_set_filter, (cairo_pattern_t *pattern, cairo_filter_t filter), (pattern, filter))
STUB_VOID(cairo, cairo_rectangle, (cairo_t *cr, double x, double y, double width, double height), (cr, x, y, width, height))
STUB_VOID(cairo, cairo_restore, (cairo_t *cr), (cr))
STUB_VOID(cairo, cairo_save, (cairo_t *cr), (cr))
STUB_VOID(cairo, cairo_scale, (cairo_t *cr, double sx, double sy), (cr, sx, sy))
STUB_VOID(cairo, cairo_set_dash, (cairo_t *cr, const double *dashes, int num_dashes, double offset), (cr, dashes, num_dashes, offset))
STUB_VOID(cairo, cairo_set_font_face, (cairo_t *cr, cairo_font_face_t *font_face), (cr, font_face))
STUB_VOID(cairo, cairo_set_font_options, (cairo_t *cr, const cairo_font_options_t *options), (cr, options))
STUB_VOID(cairo, cairo_set_font_size, (cairo_t *cr, double size), (cr, size))
STUB_VOID(cairo, cairo_set_line_width, (cairo_t *cr, double width), (cr, width))
STUB_VOID(cairo, cairo_set_source_rgb, (cairo_t *cr, double red, double green, double blue), (cr, red, green, blue))
STUB_VOID(cairo, cairo_set_source_rgba, (cairo_t *cr, double red, double green, double blue, double alpha), (cr, red, green, blue, alpha))
STUB_VOID(cairo, cairo_set_source_surface, (cairo_t *cr, cairo_surface_t *surface, double x, double y), (cr, surface, x, y))
STUB_VOID(cairo, cairo_show_glyphs, (cairo_t *cr, const cairo_glyph_t *glyphs, int num_glyphs), (cr, glyphs, num_glyphs))
STUB_VOID(cairo, cairo_font_extents, (cairo_t *cr, cairo_font_extents_t *extents), (cr, extents))
STUB_VOID(cairo, cairo_glyph_extents, (cairo_t *cr, const cairo_glyph_t *glyphs, int num_glyphs, cairo_text_extents_t *extents), (cr, glyphs, num_glyphs, extents))
STUB_VOID(cairo, cairo_stroke, (cairo_t *cr), (cr))
STUB_VOID(cairo, cairo_surface_destroy, (cairo_surface_t *surface), (surface))
STUB_VOID(cairo, cairo_surface_finish, (cairo_surface_t *surface), (surface))
STUB_VOID(cairo, cairo_surface_flush, (cairo_surface_t *surface), (surface))
STUB(cairo, cairo_status_t, cairo_surface_status, (cairo_surface_t *surface), (surface))
STUB_VOID(cairo, cairo_translate, (cairo_t *cr, double tx, double ty), (cr, tx, ty))
STUB_VOID(cairo, cairo_rotate, (cairo_t *cr, double angle), (cr, angle))
STUB(cairo, cairo_pattern_t *, cairo_pattern_create_linear, (double x0, double y0, double x1, double y1), (x0, y0, x1, y1))
STUB(cairo, cairo_pattern_t *, cairo_pattern_create_radial, (double cx0, double cy0, double radius0, double cx1, double cy1, double radius1), (cx0, cy0, radius0, cx1, cy1, radius1))
STUB_VOID(cairo, cairo_pattern_add_color_stop_rgba, (cairo_pattern_t *pattern, double offset, double red, double green, double blue, double alpha), (pattern, offset, red, green, blue, alpha))
STUB_VOID(cairo, cairo_pattern_set_matrix, (cairo_pattern_t *pattern, const cairo_matrix_t *matrix), (pattern, matrix))
STUB_VOID(cairo, cairo_pattern_destroy, (cairo_pattern_t *pattern), (pattern))
STUB_VOID(cairo, cairo_set_source, (cairo_t *cr, cairo_pattern_t *source), (cr, source))
STUB_VOID(cairo, cairo_matrix_init_translate, (cairo_matrix_t *matrix, double tx, double ty), (matrix, tx, ty))
STUB_VOID(cairo, cairo_matrix_scale, (cairo_matrix_t *matrix, double sx, double sy), (matrix, sx, sy))
STUB_VOID(cairo, cairo_matrix_translate, (cairo_matrix_t *matrix, double tx, double ty), (matrix, tx, ty))
STUB_VOID(cairo, cairo_new_path, (cairo_t *cr), (cr))
STUB_VOID(cairo, cairo_new_sub_path, (cairo_t *cr), (cr))
STUB_VOID(cairo, cairo_close_path, (cairo_t *cr), (cr))
STUB_VOID(cairo, cairo_curve_to, (cairo_t *cr, double x1, double y1, double x2, double y2, double x3, double y3), (cr, x1, y1, x2, y2, x3, y3))
STUB_VOID(cairo, cairo_set_fill_rule, (cairo_t *cr, cairo_fill_rule_t fill_rule), (cr, fill_rule))
STUB_VOID(cairo, cairo_mask_surface, (cairo_t *cr, cairo_surface_t *surface, double surface_x, double surface_y), (cr, surface, surface_x, surface_y))
STUB_VOID(cairo, cairo_surface_mark_dirty, (cairo_surface_t *surface), (surface))

// poppler-glib
STUB(poppler, PopplerDocument *, poppler_document_new_from_file,
     (const char *uri, const char *password, GError **error), (uri, password, error))
STUB(poppler, GQuark, poppler_error_quark, (void), ())
STUB(poppler, int, poppler_document_get_n_pages, (PopplerDocument *document), (document))
STUB(poppler, PopplerPage *, poppler_document_get_page, (PopplerDocument *document, int index), (document, index))
STUB(poppler, gchar *, poppler_document_get_title, (PopplerDocument *document), (document))
STUB(poppler, gchar *, poppler_document_get_author, (PopplerDocument *document), (document))
STUB(poppler, gchar *, poppler_document_get_subject, (PopplerDocument *document), (document))
STUB(poppler, gchar *, poppler_document_get_creator, (PopplerDocument *document), (document))
STUB(poppler, gchar *, poppler_document_get_producer, (PopplerDocument *document), (document))
STUB(poppler, GDateTime *, poppler_document_get_creation_date_time, (PopplerDocument *document), (document))
STUB(poppler, PopplerDest *, poppler_document_find_dest, (PopplerDocument *document, const gchar *link_name),
     (document, link_name))
STUB_VOID(poppler, poppler_dest_free, (PopplerDest *dest), (dest))
STUB_VOID(poppler, poppler_action_free, (PopplerAction *action), (action))
STUB(poppler, PopplerIndexIter *, poppler_index_iter_new, (PopplerDocument *document), (document))
STUB(poppler, PopplerIndexIter *, poppler_index_iter_get_child, (PopplerIndexIter *parent), (parent))
STUB(poppler, PopplerAction *, poppler_index_iter_get_action, (PopplerIndexIter *iter), (iter))
STUB(poppler, gboolean, poppler_index_iter_next, (PopplerIndexIter *iter), (iter))
STUB_VOID(poppler, poppler_index_iter_free, (PopplerIndexIter *iter), (iter))
STUB(poppler, gchar *, poppler_page_get_label, (PopplerPage *page), (page))
STUB_VOID(poppler, poppler_page_get_size, (PopplerPage *page, double *width, double *height), (page, width, height))
STUB_VOID(poppler, poppler_page_render, (PopplerPage *page, cairo_t *cairo), (page, cairo))

// librsvg
STUB(rsvg, RsvgHandle *, rsvg_handle_new_from_data, (const guint8 *data, gsize data_len, GError **error),
     (data, data_len, error))
STUB_VOID(rsvg, rsvg_handle_set_dpi, (RsvgHandle *handle, double dpi), (handle, dpi))
STUB(rsvg, gboolean, rsvg_handle_render_document,
     (RsvgHandle *handle, cairo_t *cr, const RsvgRectangle *viewport, GError **error), (handle, cr, viewport, error))

// GObject: only poppler's and librsvg's objects are released through it, and both libraries
// depend on it, so opening it here finds the copy they loaded.
STUB_VOID(gobject, g_object_unref, (gpointer object), (object))

// Helpers over poppler's and librsvg's structs, so Swift needs neither header.

bool quire_poppler_error_is_encrypted(const GError *error) {
    return error && error->domain == poppler_error_quark() && error->code == POPPLER_ERROR_ENCRYPTED;
}

// PopplerAction is a C union and PopplerDest may be named.
int quire_outline_page(PopplerDocument *document, PopplerIndexIter *iter) {
    PopplerAction *action = poppler_index_iter_get_action(iter);
    if (!action) return 0;
    int page = 0;
    if (action->type == POPPLER_ACTION_GOTO_DEST && action->goto_dest.dest) {
        PopplerDest *dest = action->goto_dest.dest;
        if (dest->type == POPPLER_DEST_NAMED && dest->named_dest) {
            PopplerDest *found = poppler_document_find_dest(document, dest->named_dest);
            if (found) {
                page = found->page_num;
                poppler_dest_free(found);
            }
        } else {
            page = dest->page_num;
        }
    }
    poppler_action_free(action);
    return page > 0 ? page : 0;
}

char *quire_outline_title(PopplerIndexIter *iter) {
    PopplerAction *action = poppler_index_iter_get_action(iter);
    if (!action) return NULL;
    char *title = action->any.title ? g_strdup(action->any.title) : NULL;
    poppler_action_free(action);
    return title;
}

gboolean quire_rsvg_render(RsvgHandle *handle, cairo_t *cr, double width, double height, GError **error) {
    RsvgRectangle viewport = {0, 0, width, height};
    return rsvg_handle_render_document(handle, cr, &viewport, error);
}

// libavif: decoding one still picture.
STUB(avif, avifDecoder *, avifDecoderCreate, (void), ())
STUB_VOID(avif, avifDecoderDestroy, (avifDecoder *decoder), (decoder))
STUB(avif, avifResult, avifDecoderSetIOMemory, (avifDecoder *decoder, const uint8_t *data, size_t size), (decoder, data, size))
STUB(avif, avifResult, avifDecoderParse, (avifDecoder *decoder), (decoder))
STUB(avif, avifResult, avifDecoderNextImage, (avifDecoder *decoder), (decoder))
STUB(avif, avifResult, avifImageYUVToRGB, (const avifImage *image, avifRGBImage *rgb), (image, rgb))
STUB_VOID(avif, avifRGBImageSetDefaults, (avifRGBImage *rgb, const avifImage *image), (rgb, image))
STUB_VOID(avif, avifRGBImageAllocatePixels, (avifRGBImage *rgb), (rgb))
STUB_VOID(avif, avifRGBImageFreePixels, (avifRGBImage *rgb), (rgb))
STUB(avif, const char *, avifResultToString, (avifResult result), (result))

// libjxl: decoding one still picture.
STUB(jxl, JxlDecoder *, JxlDecoderCreate, (const JxlMemoryManager *memory_manager), (memory_manager))
STUB_VOID(jxl, JxlDecoderDestroy, (JxlDecoder *dec), (dec))
STUB(jxl, JxlDecoderStatus, JxlDecoderSubscribeEvents, (JxlDecoder *dec, int events_wanted), (dec, events_wanted))
STUB(jxl, JxlDecoderStatus, JxlDecoderSetKeepOrientation, (JxlDecoder *dec, JXL_BOOL keep_orientation), (dec, keep_orientation))
STUB(jxl, JxlDecoderStatus, JxlDecoderSetUnpremultiplyAlpha, (JxlDecoder *dec, JXL_BOOL unpremul_alpha), (dec, unpremul_alpha))
STUB(jxl, JxlDecoderStatus, JxlDecoderSetInput, (JxlDecoder *dec, const uint8_t *data, size_t size), (dec, data, size))
STUB_VOID(jxl, JxlDecoderCloseInput, (JxlDecoder *dec), (dec))
STUB(jxl, JxlDecoderStatus, JxlDecoderProcessInput, (JxlDecoder *dec), (dec))
STUB(jxl, JxlDecoderStatus, JxlDecoderGetBasicInfo, (const JxlDecoder *dec, JxlBasicInfo *info), (dec, info))
STUB(jxl, JxlDecoderStatus, JxlDecoderImageOutBufferSize, (const JxlDecoder *dec, const JxlPixelFormat *format, size_t *size), (dec, format, size))
STUB(jxl, JxlDecoderStatus, JxlDecoderSetImageOutBuffer, (JxlDecoder *dec, const JxlPixelFormat *format, void *buffer, size_t size), (dec, format, buffer, size))
