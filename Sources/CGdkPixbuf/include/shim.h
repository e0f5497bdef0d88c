#pragma once
// gdk-pixbuf's pkg-config flags carry -pthread, which SwiftPM rejects with a warning (see CNotify); the few
// calls the html export's thumbnails need are declared here from gdk-pixbuf's documented API.
#include <glib.h>
#include <glib-object.h>

// gdk-pixbuf is opened with dlopen on first use (pixbuf.c; see CLoader): NULL when it is loaded, otherwise why not.
const char *roost_pixbuf_load(void);

typedef struct _GdkPixbuf GdkPixbuf;
typedef struct _GdkPixbufFormat GdkPixbufFormat;

GdkPixbufFormat *gdk_pixbuf_get_file_info(const char *filename, int *width, int *height);
GdkPixbuf *gdk_pixbuf_new_from_file_at_scale(const char *filename, int width, int height, gboolean preserve_aspect_ratio,
                                             GError **error);
GdkPixbuf *gdk_pixbuf_apply_embedded_orientation(GdkPixbuf *src);
int gdk_pixbuf_get_width(const GdkPixbuf *pixbuf);
int gdk_pixbuf_get_height(const GdkPixbuf *pixbuf);
gboolean gdk_pixbuf_get_has_alpha(const GdkPixbuf *pixbuf);
gboolean gdk_pixbuf_savev(GdkPixbuf *pixbuf, const char *filename, const char *type, char **option_keys,
                          char **option_values, GError **error);
