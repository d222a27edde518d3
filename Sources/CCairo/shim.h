// cairo is delay-loaded (Sources/CQuireDelayLoad), so this module gets no pkg-config flags and
// names cairo's headers by their path: cairo's own includes are relative to it, and
// <ft2build.h> comes from CFreeType, which every importer of this module also depends on.
#include "/usr/include/cairo/cairo.h"
#include "/usr/include/cairo/cairo-ft.h"
