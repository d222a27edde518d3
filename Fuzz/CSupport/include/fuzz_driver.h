#include <stddef.h>
#include <stdint.h>

// libFuzzer's driver, for a main of our own: SwiftPM links an executable's main as <module>_main
// (--defsym main=<module>_main), which a -parse-as-library target must define itself.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*test_one_input)(const uint8_t *data, size_t size));
