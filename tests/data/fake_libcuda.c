// SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
// SPDX-License-Identifier: Apache-2.0
/* A stand-in for libcuda.so.1 that answers the few driver calls cuda_fatbin._driver makes, as the
 * environment tells it to (tests/test_driver.py builds it with the C compiler into a temporary folder):
 *   FAKE_CUDA_INIT     cuInit's return code (default 0)
 *   FAKE_CUDA_COUNT    how many devices cuDeviceGetCount reports (default 1)
 *   FAKE_CUDA_FAIL     the one call that fails with CUDA error 999: "version", "count", "get", "major",
 *                      "minor" (default none)
 *   FAKE_CUDA_FAIL_AT  the device index at which "get"/"major"/"minor" fail (default: every index)
 *   FAKE_CUDA_NAME     the name of every device, as raw bytes (default "Fake GPU i")
 * Device i is "Fake GPU i" with compute capability (8 + i, i) and the driver reports version 12080.
 * Return codes follow the driver API: 0 is CUDA_SUCCESS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int env_int(const char *name, int fallback) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

static int fails(const char *call, int index) {
    const char *v = getenv("FAKE_CUDA_FAIL");
    if (!v || strcmp(v, call) != 0) return 0;
    int at = env_int("FAKE_CUDA_FAIL_AT", -1);
    return at < 0 || at == index;
}

/* "Currently, the Flags parameter must be 0" (CUDA Driver API, cuInit): other flags are
 * CUDA_ERROR_INVALID_VALUE (1). */
int cuInit(unsigned int flags) { return flags != 0 ? 1 : env_int("FAKE_CUDA_INIT", 0); }

int cuDriverGetVersion(int *version) {
    if (fails("version", -1)) return 999;
    *version = 12080;
    return 0;
}

int cuDeviceGetCount(int *count) {
    if (fails("count", -1)) return 999;
    *count = env_int("FAKE_CUDA_COUNT", 1);
    return 0;
}

int cuDeviceGet(int *device, int ordinal) {
    if (fails("get", ordinal)) return 999;
    *device = ordinal;
    return 0;
}

int cuDeviceGetAttribute(int *value, int attribute, int device) {
    if (attribute == 75) {
        if (fails("major", device)) return 999;
        *value = 8 + device;
        return 0;
    }
    if (attribute == 76) {
        if (fails("minor", device)) return 999;
        *value = device;
        return 0;
    }
    return 1; /* CUDA_ERROR_INVALID_VALUE: the probe asks for no other attribute */
}

int cuDeviceGetName(char *name, int length, int device) {
    const char *fixed = getenv("FAKE_CUDA_NAME");
    if (fixed) snprintf(name, (size_t)length, "%s", fixed);
    else snprintf(name, (size_t)length, "Fake GPU %d", device);
    return 0;
}
