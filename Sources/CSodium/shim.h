#include <sodium.h>
#include <stdint.h>
#include <string.h>

/*
 * Seeded randomness for the deterministic simulation only (docs/ARCHITECTURE.md,
 * "Deterministic simulation"). `rchat_random_install` makes libsodium draw through
 * `rchat_random_buf`, which forwards to libsodium's own generator unless the calling thread
 * turned seeding on with `rchat_random_seed`: then the bytes come from a BLAKE2b-keyed
 * counter, the same sequence for the same seed. Nothing but the simulation installs it.
 */
typedef struct {
    int active;
    unsigned char key[crypto_generichash_KEYBYTES];
    uint64_t counter;
} rchat_random_state;

/* Function-scope statics: Swift emits a header's inline functions, not its variables. */
static inline rchat_random_state *rchat_random_thread_state(void) {
    static __thread rchat_random_state state;
    return &state;
}

static inline const char *rchat_random_name(void) { return "rchat-seedable"; }

static inline void rchat_random_buf(void *const buf, const size_t size) {
    rchat_random_state *const state = rchat_random_thread_state();
    if (!state->active) {
        randombytes_internal_implementation.buf(buf, size);
        return;
    }
    unsigned char seed[randombytes_SEEDBYTES];
    uint64_t counter = state->counter++;
    crypto_generichash(seed, sizeof seed, (const unsigned char *)&counter, sizeof counter,
                       state->key, sizeof state->key);
    randombytes_buf_deterministic(buf, size, seed);
    sodium_memzero(seed, sizeof seed);
}

static inline uint32_t rchat_random_u32(void) {
    uint32_t value;
    rchat_random_buf(&value, sizeof value);
    return value;
}

static inline void rchat_random_stir(void) {
    if (randombytes_internal_implementation.stir) randombytes_internal_implementation.stir();
}

static inline int rchat_random_install(void) {
    static struct randombytes_implementation implementation = {
        rchat_random_name, rchat_random_u32, rchat_random_stir, NULL, rchat_random_buf, NULL
    };
    return randombytes_set_implementation(&implementation);
}

/* Seeds this thread's draws (`seed` of any length); `active` 0 turns seeding off again. */
static inline void rchat_random_seed(const unsigned char *seed, size_t length, int active) {
    rchat_random_state *const state = rchat_random_thread_state();
    state->active = active;
    state->counter = 0;
    crypto_generichash(state->key, sizeof state->key, seed, length, NULL, 0);
}
