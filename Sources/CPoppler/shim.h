#include <glib.h>
#include <glib-object.h>
#include <poppler.h>

// PopplerAction is a C union and PopplerDest may be named: these read an outline entry without
// Swift touching union members.

/// The 1-based page an outline entry points to, or 0 when it points nowhere in this document.
static inline int quire_outline_page(PopplerDocument *document, PopplerIndexIter *iter) {
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

/// The outline entry's title (caller frees with g_free), or NULL.
static inline char *quire_outline_title(PopplerIndexIter *iter) {
    PopplerAction *action = poppler_index_iter_get_action(iter);
    if (!action) return NULL;
    char *title = action->any.title ? g_strdup(action->any.title) : NULL;
    poppler_action_free(action);
    return title;
}
