// libchafa: images drawn as terminal symbols, sixels or kitty graphics.
#include <chafa.h>
