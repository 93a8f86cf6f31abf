// glibc's `sincos` for the spring kernel (SpringModes.basis). No logic here.
//
// Swift's Glibc module does not declare `sincos` (a GNU extension, hidden without
// _GNU_SOURCE), so its prototype is written out here: glibc has exported it since 1997, and
// it returns exactly what `sin` and `cos` return (checked bit for bit on 4,000,000 random
// arguments, and by the kernel benchmark's checksums). One call for both halves the
// argument reduction and saves a call: gcc makes the same change in the C reference loop.
#ifndef MOTION_MATH_EXTRAS_H
#define MOTION_MATH_EXTRAS_H

extern void sincos(double x, double *sine, double *cosine);

static inline void motion_sincos(double x, double *sine, double *cosine) {
    sincos(x, sine, cosine);
}

#endif
