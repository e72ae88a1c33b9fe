// GIO's D-Bus client (GDBus): desktop notifications are posted over the session bus from
// inside the process, so an alert's title and text are never in a command line.
#include <gio/gio.h>
