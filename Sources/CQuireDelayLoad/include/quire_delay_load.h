#ifndef QUIRE_DELAY_LOAD_H
#define QUIRE_DELAY_LOAD_H

// cairo (with pixman and the X11 libraries it links), poppler-glib and librsvg (with the GTK stack
// they pull in: gio, pango, gdk-pixbuf, NSS, lcms...) are opened on first use, not at start-up:
// map-only layout never pays their loading time or memory, nor a book without PDFs or SVG. Swift sees only the declarations below, never the libraries' own headers;
// delay_load.c includes those too, so the compiler checks every declaration here against them.

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

// Call before the first cairo_*, poppler_* or rsvg_* call: loads the library, or returns false with the
// reason in `reason`.
bool quire_load_cairo(char *reason, size_t size);
bool quire_load_poppler(char *reason, size_t size);
bool quire_load_rsvg(char *reason, size_t size);
// libavif and libjxl: CQuireImage calls these before decoding (their declarations come from the
// libraries' own headers, which link nothing).
bool quire_load_avif(char *reason, size_t size);
bool quire_load_jxl(char *reason, size_t size);

// cairo's own declarations are imported through CCairo; these need only its context type.
typedef struct _cairo cairo_t;

// poppler-glib
typedef struct _PopplerDocument PopplerDocument;
typedef struct _PopplerPage PopplerPage;
typedef struct _PopplerIndexIter PopplerIndexIter;
PopplerDocument *poppler_document_new_from_file(const char *uri, const char *password, GError **error);
int poppler_document_get_n_pages(PopplerDocument *document);
PopplerPage *poppler_document_get_page(PopplerDocument *document, int index);
gchar *poppler_document_get_title(PopplerDocument *document);
gchar *poppler_document_get_author(PopplerDocument *document);
gchar *poppler_document_get_subject(PopplerDocument *document);
gchar *poppler_document_get_creator(PopplerDocument *document);
gchar *poppler_document_get_producer(PopplerDocument *document);
GDateTime *poppler_document_get_creation_date_time(PopplerDocument *document);
PopplerIndexIter *poppler_index_iter_new(PopplerDocument *document);
PopplerIndexIter *poppler_index_iter_get_child(PopplerIndexIter *parent);
gboolean poppler_index_iter_next(PopplerIndexIter *iter);
void poppler_index_iter_free(PopplerIndexIter *iter);
gchar *poppler_page_get_label(PopplerPage *page);
void poppler_page_get_size(PopplerPage *page, double *width, double *height);
void poppler_page_render(PopplerPage *page, cairo_t *cairo);

/// Whether opening failed because the document is encrypted (no or a wrong password).
bool quire_poppler_error_is_encrypted(const GError *error);
/// The 1-based page an outline entry points to, or 0 when it points nowhere in this document.
int quire_outline_page(PopplerDocument *document, PopplerIndexIter *iter);
/// The outline entry's title (caller frees with g_free), or NULL.
char *quire_outline_title(PopplerIndexIter *iter);

// librsvg
typedef struct _RsvgHandle RsvgHandle;
RsvgHandle *rsvg_handle_new_from_data(const guint8 *data, gsize data_len, GError **error);
void rsvg_handle_set_dpi(RsvgHandle *handle, double dpi);
/// Renders the whole document into a width × height viewport at the origin.
gboolean quire_rsvg_render(RsvgHandle *handle, cairo_t *cr, double width, double height, GError **error);

// GObject: poppler's and librsvg's objects are released through it.
void g_object_unref(gpointer object);

#endif
