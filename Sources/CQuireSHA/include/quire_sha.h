#ifndef QUIRE_SHA_H
#define QUIRE_SHA_H
#include <stddef.h>
#include <stdint.h>

/// 1 when this CPU has the SHA extensions (x86-64 SHA-NI with SSSE3 and SSE4.1), else 0.
int quire_sha256_hardware(void);

/// Runs SHA-256's compression over `blocks` 64-byte blocks with the SHA instructions.
/// Call only when quire_sha256_hardware() is 1.
void quire_sha256_blocks(uint32_t state[8], const uint8_t *data, size_t blocks);

#endif
