"""How tinybook.codegen's DECOMP_COEF table (04_codegen, decompositions) and tinybook.elementwise's ERF_COEF (01a_elementwise, erf) were derived: mpmath Chebyshev
fits (near-minimax) at 60 digits; run it to print the tables and the errors."""
import mpmath as mp, numpy as np
mp.mp.dps = 60

def short(c:float, tol:float) -> str:
    "`c` with the fewest significant digits that stay within `tol` of it."
    return next(s for s in (f"{c:.{k}g}" for k in range(1, 18)) if abs(float(s) - c) <= tol)

def fit(f, lo, hi, n, np_t, mant, full, ref, shift):
    "Fit `f` on [lo, hi] with `n` coefficients; each is printed with the digits its term needs (|x|^(k+shift) * error <= 2^-(mant+7))."
    xm = max(abs(lo), abs(hi))
    cs = [short(float(c), 2.0 ** -(mant + 7) / xm ** (k + shift)) for k, c in enumerate(mp.chebyfit(f, [lo, hi], n)[::-1])]
    p = lambda x: mp.polyval([mp.mpf(float(np_t(float(c)))) for c in cs[::-1]], x)  # the values the kernel will use
    xs = [lo + (hi - lo) * (mp.mpf(i) + 0.5) / 4000 for i in range(4000)]
    return cs, float(max(abs(full(x, p(x)) / ref(x) - 1) for x in xs))

def pio2_pieces(bits, np_t, mant):
    "pi/2 as C1 + C2 + C3, C1 and C2 with `bits` significant bits (so n*C1, n*C2 are exact for small n), C3 rounded to the type."
    out, rest = [], mp.pi / 2
    for _ in range(2):
        e = mp.floor(mp.log(abs(rest), 2)) + 1 - bits
        out.append(mp.floor(rest / 2**e + mp.mpf(0.5)) * 2**e); rest -= out[-1]
    cs = [short(float(c), float(np.spacing(np_t(float(c)))) / 4) for c in out + [rest]]
    assert [np_t(float(c)) for c in cs[:2]] == [float(c) for c in out]  # C1, C2 exact in the type
    return cs

R2 = (mp.pi / 4 * mp.mpf(1.001)) ** 2  # r^2 for |r| <= pi/4, with a margin as x*(2/pi) is rounded before n is
for name, np_t, mant, (ne, nl, ns, nc), bits in [("float32", np.float32, 23, (6, 10, 4, 4), 11), ("float64", np.float64, 52, (11, 21, 7, 7), 32)]:
    m = float(np.sqrt(np_t(0.5)))  # log2's mantissa lies in [m, 2m)
    fits = dict(exp2=fit(lambda f: (2**f - 1) / f if f else mp.log(2), -0.5, 0.5, ne, np_t, mant, lambda f, q: 1 + f * q, lambda f: 2**f, 1),
                log2=fit(lambda t: mp.log(1 + t, 2) / t if t else 1 / mp.log(2), m - 1, 2 * m - 1, nl, np_t, mant, lambda t, p: t * p,
                         lambda t: mp.log(1 + t, 2), 0),
                sin=fit(lambda z: (mp.sin(mp.sqrt(z)) - mp.sqrt(z)) / z ** 1.5, 0, R2, ns, np_t, mant, lambda z, s: mp.sqrt(z) * (1 + z * s),
                        lambda z: mp.sin(mp.sqrt(z)), 1),
                cos=fit(lambda z: (mp.cos(mp.sqrt(z)) - 1) / z, 0, R2, nc, np_t, mant, lambda z, c: 1 + z * c, lambda z: mp.cos(mp.sqrt(z)), 1))
    print(f"# {name} max relative error: " + ", ".join(f"{k} {e:.1e}" for k, (_, e) in fits.items()))
    lists = [f"{k}=[{', '.join(cs)}]" for k, (cs, _) in fits.items()] + [f"pio2=[{', '.join(pio2_pieces(bits, np_t, mant))}]"]
    print(f"dtypes.{name}: dict(" + ", ".join(lists) + "),")

# erf: erf(x)/x as a polynomial in t = x^2 for |x| < 1; erfc(x)*exp(x^2) as one in z = 1/x for 1 <= x < X, where erf rounds to 1 from X on
for name, np_t, mant, X, (ns, nt) in [("float32", np.float32, 23, 4, (6, 8)), ("float64", np.float64, 52, 6, (12, 20))]:
    small = fit(lambda t: mp.erf(mp.sqrt(t)) / mp.sqrt(t) if t else 2 / mp.sqrt(mp.pi), 0, 1, ns, np_t, mant, lambda t, q: mp.sqrt(t) * q,
                lambda t: mp.erf(mp.sqrt(t)), 1)
    tail = fit(lambda z: mp.erfc(1 / z) * mp.exp(1 / z**2), mp.mpf(1) / X, 1, nt, np_t, mant, lambda z, q: 1 - mp.exp(-1 / z**2) * q,
               lambda z: mp.erf(1 / z), 0)
    print(f"# {name} erf max relative error: below 1 {small[1]:.1e}, above {tail[1]:.1e}")
    print(f"dtypes.{name}: ([{', '.join(small[0])}],\n  [{', '.join(tail[0])}], {X}),")
