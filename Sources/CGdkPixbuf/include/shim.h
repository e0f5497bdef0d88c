#pragma once
// gdk-pixbuf's pkg-config flags carry -pthread, which SwiftPM rejects with a warning (see CNotify); the few
// calls the html export's thumbnails need are declared here from gdk-pixbuf's documented API.
#include <glib.h>
#include <glib-object.h>

// gdk-pixbuf is opened with dlopen on first use (pixbuf.c; see CLoader): NULL when it is loaded, otherwise why not.
const char *roost_pixbuf_load(void);

typedef struct _GdkPixbuf GdkPixbuf;
typedef struct _GdkPixbufLoader GdkPixbufLoader;

// Pictures are read through a loader of the type their first bytes name (never the one gdk-pixbuf would guess),
// fed by Roost in pieces, so the size is known (size-prepared) before anything is decoded.
GdkPixbufLoader *gdk_pixbuf_loader_new_with_type(const char *image_type, GError **error);
gboolean gdk_pixbuf_loader_write(GdkPixbufLoader *loader, const guchar *buf, gsize count, GError **error);
gboolean gdk_pixbuf_loader_close(GdkPixbufLoader *loader, GError **error);
GdkPixbuf *gdk_pixbuf_loader_get_pixbuf(GdkPixbufLoader *loader);
void gdk_pixbuf_loader_set_size(GdkPixbufLoader *loader, int width, int height);
GdkPixbuf *gdk_pixbuf_apply_embedded_orientation(GdkPixbuf *src);
int gdk_pixbuf_get_width(const GdkPixbuf *pixbuf);
int gdk_pixbuf_get_height(const GdkPixbuf *pixbuf);
gboolean gdk_pixbuf_get_has_alpha(const GdkPixbuf *pixbuf);
gboolean gdk_pixbuf_savev(GdkPixbuf *pixbuf, const char *filename, const char *type, char **option_keys,
                          char **option_values, GError **error);

typedef void (*RoostSizePrepared)(GdkPixbufLoader *loader, int width, int height, gpointer data);

/// "size-prepared": the header was read; `gdk_pixbuf_loader_set_size` now chooses the size decoded (0×0: none).
static inline gulong roost_pixbuf_loader_on_size_prepared(GdkPixbufLoader *loader, RoostSizePrepared callback, gpointer data) {
    return g_signal_connect_data(loader, "size-prepared", G_CALLBACK(callback), data, NULL, (GConnectFlags)0);
}
