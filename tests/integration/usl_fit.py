"""Checks sizeup's Universal Scalability Law fit against an independent non-linear fit.

Usage: usl_fit.py TEST_USL_BINARY

For each data set, the binary (`test_usl --fit`) fits s and k on the linearised form; scipy's
curve_fit fits X(N) = X1 N / (1 + s (N - 1) + k N (N - 1)) itself, with s, k >= 0, X1 held at
the measured 1-replica capacity and each point's error taken as proportional to its value (the
binary's assumption without standard errors). The two must agree on s, k and the peak.
"""
import json
import subprocess
import sys

import numpy as np
from scipy.optimize import curve_fit

# The R `usl` package's public data sets (Gunther, Guerrilla Capacity Planning, 2007).
DATA = {
    # SGI Origin 2000 ray-tracing benchmark: processors, operations per second.
    "raytracer": [(1, 20), (4, 78), (8, 130), (12, 170), (16, 190), (20, 210), (24, 220),
                  (28, 245), (32, 255), (48, 280), (64, 310)],
    # SPEC SDM 91 on a Sun SPARCcenter 2000: load (users), throughput (scripts per hour).
    "specsdm91": [(1, 64.9), (18, 995.9), (36, 1652.4), (72, 1853.2), (108, 1828.9),
                  (144, 1775.0), (216, 1702.2)],
    # A synthetic curve with known s = 0.03, k = 0.0005 and 2% noise (fixed seed).
    "synthetic": None,
}


def synthetic():
    rng = np.random.default_rng(42)
    n = np.array([1, 2, 3, 4, 6, 8, 12, 16, 24, 32])
    x = 100 * n / (1 + 0.03 * (n - 1) + 0.0005 * n * (n - 1))
    return list(zip(n.tolist(), (x * (1 + 0.02 * rng.standard_normal(len(n)))).tolist()))


def ours(binary, points):
    text = "".join(f"{n} {x!r}\n" for n, x in points)
    out = subprocess.run([binary, "--fit"], input=text, capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


def theirs(points):
    n = np.array([p[0] for p in points], dtype=float)
    x = np.array([p[1] for p in points], dtype=float)
    x1 = x[n == 1].mean()

    def law(nn, s, k):
        return x1 * nn / (1 + s * (nn - 1) + k * nn * (nn - 1))

    (s, k), cov = curve_fit(law, n, x, p0=[0.01, 1e-4], bounds=([0, 0], [np.inf, np.inf]),
                            sigma=x, absolute_sigma=False, max_nfev=20000)
    err = np.sqrt(np.diag(cov))
    peak = np.sqrt((1 - s) / k) if k > 0 and s < 1 else None
    return {"s": s, "k": k, "s_err": err[0], "k_err": err[1], "peak_replicas": peak}


def close(name, what, a, b, rel, abs_tol):
    ok = abs(a - b) <= max(rel * abs(b), abs_tol)
    print(f"{name:10s} {what:14s} sizeup {a:.6g}  scipy {b:.6g}  {'ok' if ok else 'DIFFERENT'}")
    return ok


def main():
    binary = sys.argv[1]
    good = True
    for name, points in DATA.items():
        points = points or synthetic()
        a, b = ours(binary, points), theirs(points)
        # The linearised fit weighs the points as the non-linear one does to first order: the
        # coefficients agree within 10% (or a small absolute amount when near 0), and within
        # their standard errors.
        good &= close(name, "s", a["s"], b["s"], 0.10, 0.002)
        good &= close(name, "k", a["k"], b["k"], 0.10, 1e-5)
        good &= abs(a["s"] - b["s"]) <= 2 * max(a["s_err"], b["s_err"])
        good &= abs(a["k"] - b["k"]) <= 2 * max(a["k_err"], b["k_err"])
        if b["peak_replicas"] is not None and a["peak_replicas"] is not None:
            good &= close(name, "peak_replicas", a["peak_replicas"], b["peak_replicas"], 0.10, 1)
        elif a["k_distinct"]:
            print(f"{name}: sizeup has a peak, scipy none")
            good = False
        print(f"{name:10s} sizeup says: {a['text']}")
    sys.exit(0 if good else 1)


if __name__ == "__main__":
    main()
