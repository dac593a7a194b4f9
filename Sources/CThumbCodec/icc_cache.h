#ifndef THUMBD_ICC_CACHE_H
#define THUMBD_ICC_CACHE_H
// Internal to the shim: the cache of built profiles (icc_cache.c) and the
// reference counting it relies on (icc.c).
#include "thumbd_codec.h"

/// The cached profile for exactly these bytes, model and inversion, with a
/// reference for the caller; NULL when not cached.
thumbd_icc *thumbd_icc_cache_find(const void *data, size_t length, int model, int cmyk_inverted);
/// Offers a freshly built profile (the caller's reference) to the cache and
/// returns the one to use: `icc`, or an equal entry another thread added
/// first (then `icc` is released).
thumbd_icc *thumbd_icc_cache_insert(thumbd_icc *icc, const void *data, size_t length, int model, int cmyk_inverted);
/// One more reference; thumbd_icc_close drops one and frees at zero.
void thumbd_icc_retain(thumbd_icc *icc);

#endif
