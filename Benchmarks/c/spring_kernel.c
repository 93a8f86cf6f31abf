/*
 * The C reference for workload 1 (Benchmarks/README.md): 5000 springs of 64 lanes each
 * (response 0.5, dampingRatio 0.987, 0 -> 320, initial velocity 0), every lane advanced by
 * one 1/60 s step per iteration; 20 timed iterations after one warm-up, median.
 *
 * It does the arithmetic of MotionEngine's SpringKernel (Sources/MotionEngine/Kernels/
 * SpringKernel.swift) line for line: the same precomputed constants, computed by the same
 * formulas in the same order, and the same closed-form under-damped evaluation
 *     e = exp(-decay*t); f = e*cos(second*t); g = e*sin(second*t)
 *     x = target + (p*f + q*g);  v = dp*f + dq*g
 * with the same struct layout as the Swift `SpringKernel` (136 bytes per lane), so both
 * sides move the same bytes. Built by Benchmarks/run.sh with `gcc -O2` (no -ffast-math,
 * no -march: plain). The checksum (sum of every lane's position and velocity after the
 * last step) must equal the Swift benchmark's: run.sh compares them.
 *
 * Variants (argv[1]):
 *   lanes    the basis (exp, cos, sin) once per spring, shared by its 64 lanes
 *            (SpringModes.basis + SpringKernel.value(basis:)/velocity(basis:));
 *   perlane  every lane calls value(at:) and velocity(at:), each evaluating the basis;
 *   lanebasis every lane evaluates the basis once and combines it for its position and
 *            velocity (what a kernel call returning both would cost; information);
 *   compact  as `lanes`, with a hand-packed 40-byte lane (information only: what a C
 *            programmer's own layout costs; not the goal's reference).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { SPRINGS = 5000, LANES = 64, ITERATIONS = 20 };

typedef struct { double mass, stiffness, damping; } spring_parameters;

enum regime { UNDER_DAMPED = 0, CRITICAL = 1, OVER_DAMPED = 2 };

typedef struct {
    unsigned char regime; /* a one-byte Swift enum, padded like Swift's */
    double omega0, zeta, decay, second;
} spring_modes;

typedef struct {
    spring_parameters parameters;
    spring_modes modes;
    double target, displacement, initial_velocity;
    double p, q, dp, dq, ap, aq;
} spring_kernel;

typedef struct { double target, p, q, dp, dq; } compact_lane;

static spring_parameters response_parameters(double response, double damping_ratio) {
    double omega = 2 * M_PI / response;
    spring_parameters r = { 1, omega * omega, 2 * damping_ratio * omega };
    return r;
}

static spring_modes make_modes(spring_parameters parameters) {
    spring_modes m;
    memset(&m, 0, sizeof m);
    double omega0 = sqrt(parameters.stiffness / parameters.mass);
    double zeta = parameters.damping / (2 * sqrt(parameters.stiffness * parameters.mass));
    m.omega0 = omega0;
    m.zeta = zeta;
    if (fabs(zeta - 1) <= 1e-9) {
        m.regime = CRITICAL;
        m.decay = omega0;
        m.second = 0;
    } else if (zeta < 1) {
        m.regime = UNDER_DAMPED;
        m.decay = zeta * omega0;
        m.second = omega0 * sqrt((1 - zeta) * (1 + zeta));
    } else {
        m.regime = OVER_DAMPED;
        double s = sqrt((zeta - 1) * (zeta + 1));
        m.decay = omega0 / (zeta + s);
        m.second = -omega0 * (zeta + s);
    }
    return m;
}

static spring_kernel make_kernel(spring_parameters parameters, double a, double b, double v0) {
    spring_kernel k;
    memset(&k, 0, sizeof k);
    k.parameters = parameters;
    k.modes = make_modes(parameters);
    k.target = b;
    double y0 = a - b;
    k.displacement = y0;
    k.initial_velocity = v0;
    /* Only the under-damped branch is exercised (zeta = 0.987); the others as in Swift. */
    if (k.modes.regime == UNDER_DAMPED) {
        double alpha = k.modes.decay, omega_d = k.modes.second;
        k.p = y0;
        k.q = (v0 + alpha * y0) / omega_d;
        k.dp = v0;
        k.dq = -omega_d * k.p - alpha * k.q;
        k.ap = omega_d * k.dq - alpha * k.dp;
        k.aq = -omega_d * k.dp - alpha * k.dq;
    } else if (k.modes.regime == CRITICAL) {
        double w = k.modes.omega0;
        k.p = y0;
        k.q = v0 + w * y0;
        k.dp = k.q - w * k.p;
        k.dq = -w * k.q;
        k.ap = k.dq - w * k.dp;
        k.aq = -w * k.dq;
    } else {
        double r1 = -k.modes.decay, r2 = k.modes.second;
        double a1 = (v0 - r2 * y0) / (r1 - r2);
        k.p = a1;
        k.q = y0 - a1;
        k.dp = r1 * k.p;
        k.dq = r2 * k.q;
        k.ap = r1 * k.dp;
        k.aq = r2 * k.dq;
    }
    return k;
}

/* SpringModes.basis(at:) */
static inline void basis(const spring_modes *m, double t, double *f, double *g) {
    switch (m->regime) {
    case UNDER_DAMPED: {
        double e = exp(-m->decay * t);
        double phase = m->second * t;
        *f = e * cos(phase);
        *g = e * sin(phase);
        return;
    }
    case CRITICAL: {
        double e = exp(-m->decay * t);
        *f = e;
        *g = t * e;
        return;
    }
    default:
        *f = exp(-m->decay * t);
        *g = exp(m->second * t);
        return;
    }
}

/* Swift.max(t, 0) */
static inline double clamp_time(double t) { return 0 >= t ? 0 : t; }

static inline double kernel_value(const spring_kernel *k, double t) {
    double f, g;
    basis(&k->modes, clamp_time(t), &f, &g);
    return k->target + (k->p * f + k->q * g);
}

static inline double kernel_velocity(const spring_kernel *k, double t) {
    double f, g;
    basis(&k->modes, clamp_time(t), &f, &g);
    return k->dp * f + k->dq * g;
}

static unsigned long long now_nanos(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Keeps the stores observable. */
double *volatile escape_position;
double *volatile escape_velocity;

int main(int argc, char **argv) {
    const char *variant = argc > 1 ? argv[1] : "lanes";
    int mode;
    if (strcmp(variant, "lanes") == 0) mode = 0;
    else if (strcmp(variant, "perlane") == 0) mode = 1;
    else if (strcmp(variant, "compact") == 0) mode = 2;
    else if (strcmp(variant, "lanebasis") == 0) mode = 3;
    else { fprintf(stderr, "usage: %s lanes|perlane|lanebasis|compact\n", argv[0]); return 2; }

    const int n = SPRINGS * LANES;
    spring_parameters parameters = response_parameters(0.5, 0.987);
    spring_modes *modes = malloc(sizeof(spring_modes) * SPRINGS);
    spring_kernel *kernels = malloc(sizeof(spring_kernel) * n);
    compact_lane *compact = malloc(sizeof(compact_lane) * n);
    double *position = malloc(sizeof(double) * n);
    double *velocity = malloc(sizeof(double) * n);
    if (!modes || !kernels || !compact || !position || !velocity) { perror("malloc"); return 1; }
    for (int s = 0; s < SPRINGS; s++) {
        modes[s] = make_modes(parameters);
        for (int l = 0; l < LANES; l++) {
            spring_kernel k = make_kernel(parameters, 0, 320, 0);
            kernels[s * LANES + l] = k;
            compact_lane c = { k.target, k.p, k.q, k.dp, k.dq };
            compact[s * LANES + l] = c;
        }
    }
    escape_position = position;
    escape_velocity = velocity;

    double times[ITERATIONS];
    for (int iteration = 0; iteration <= ITERATIONS; iteration++) {
        /* Iteration 0 is the warm-up (t = 0); iteration k advances to k/60 s. */
        double t = (double)iteration / 60.0;
        unsigned long long start = now_nanos();
        if (mode == 0) {
            for (int s = 0; s < SPRINGS; s++) {
                double f, g;
                basis(&modes[s], clamp_time(t), &f, &g);
                const spring_kernel *k = &kernels[s * LANES];
                double *x = &position[s * LANES], *v = &velocity[s * LANES];
                for (int l = 0; l < LANES; l++) {
                    x[l] = k[l].target + (k[l].p * f + k[l].q * g);
                    v[l] = k[l].dp * f + k[l].dq * g;
                }
            }
        } else if (mode == 1) {
            for (int i = 0; i < n; i++) {
                position[i] = kernel_value(&kernels[i], t);
                velocity[i] = kernel_velocity(&kernels[i], t);
            }
        } else if (mode == 3) {
            for (int i = 0; i < n; i++) {
                double f, g;
                basis(&kernels[i].modes, clamp_time(t), &f, &g);
                position[i] = kernels[i].target + (kernels[i].p * f + kernels[i].q * g);
                velocity[i] = kernels[i].dp * f + kernels[i].dq * g;
            }
        } else {
            for (int s = 0; s < SPRINGS; s++) {
                double f, g;
                basis(&modes[s], clamp_time(t), &f, &g);
                const compact_lane *k = &compact[s * LANES];
                double *x = &position[s * LANES], *v = &velocity[s * LANES];
                for (int l = 0; l < LANES; l++) {
                    x[l] = k[l].target + (k[l].p * f + k[l].q * g);
                    v[l] = k[l].dp * f + k[l].dq * g;
                }
            }
        }
        unsigned long long elapsed = now_nanos() - start;
        if (iteration > 0) times[iteration - 1] = (double)elapsed / 1e6;
    }

    double checksum = 0;
    for (int i = 0; i < n; i++) checksum += escape_position[i] + escape_velocity[i];
    qsort(times, ITERATIONS, sizeof(double), compare_doubles);
    double median = (times[ITERATIONS / 2 - 1] + times[ITERATIONS / 2]) / 2;
    printf("SAMPLE kernel.c.%s ms=%.17g it_min=%.17g it_max=%.17g checksum=%.17g\n",
           variant, median, times[0], times[ITERATIONS - 1], checksum);
    free(modes); free(kernels); free(compact); free(position); free(velocity);
    return 0;
}
