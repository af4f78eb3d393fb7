"""Taylor coefficients d[k][n] of Temme's c_k(eta) (DLMF 8.12) in exact
rational arithmetic, printed as the rows of TEMME in
rust/core/src/numeric/gamma/temme.rs (26 coefficients of c_0..c_7).

    python3 scripts/gen_temme.py
"""
from fractions import Fraction as F
N = 48  # series length: c_k keeps N - 1 - 2k exact terms

def mul(a, b):
    r = [F(0)] * N
    for i, x in enumerate(a):
        if x:
            for j in range(N - i):
                r[i + j] += x * b[j]
    return r

def inv(a):  # a[0] != 0
    r = [F(0)] * N
    r[0] = 1 / a[0]
    for n in range(1, N):
        r[n] = -sum(a[j] * r[n - j] for j in range(1, n + 1)) / a[0]
    return r

def log1p_s(m):  # m[0] == 0
    r = [F(0)] * N; p = [F(1)] + [F(0)] * (N - 1)
    for j in range(1, N):
        p = mul(p, m)
        for i in range(N):
            r[i] += (F((-1) ** (j + 1), j)) * p[i]
    return r

# mu(eta): solve mu - log1p(mu) = eta^2/2 by Newton on truncated series
eta = [F(0), F(1)] + [F(0)] * (N - 2)
m = eta[:]
half_eta2 = [F(0)] * N; half_eta2[2] = F(1, 2)
for _ in range(8):
    f = [x - y - z for x, y, z in zip(m, log1p_s(m), half_eta2)]
    # f' = mu/(1+mu): f/f' = f*(1+mu)/mu ; mu = eta*u
    u = m[1:] + [F(0)]
    one_plus = [F(1) + m[0]] + m[1:]
    fu = mul(f, one_plus)           # has zero constant term (and eta^1 ...)
    step = mul(fu[1:] + [F(0)], inv(u))
    m = [x - y for x, y in zip(m, step)]
u = m[1:] + [F(0)]                 # mu = eta*u
inv_u = inv(u)                      # 1/mu = inv_u/eta
# c0 = 1/mu - 1/eta = (inv_u - 1)/eta
assert inv_u[0] == 1
c = [inv_u[1:] + [F(0)]]
# gamma_k of Gamma*(a) = sum gamma_k a^-k
B = [F(1, 6), F(-1, 30), F(1, 42), F(-1, 30), F(5, 66), F(-691, 2730), F(7, 6), F(-3617, 510)]
K = 10
lg = [F(0)] * (K + 1)
for j, b in enumerate(B, start=1):
    if 2 * j - 1 <= K:
        lg[2 * j - 1] = b / (2 * j * (2 * j - 1))
g = [F(1)] + [F(0)] * K
p = [F(1)] + [F(0)] * K
fact = 1
for j in range(1, K + 1):
    q = [F(0)] * (K + 1)
    for i, x in enumerate(p):
        if x:
            for t in range(K + 1 - i):
                q[i + t] += x * lg[t]
    p = q; fact *= j
    for i in range(K + 1):
        g[i] += p[i] / fact
KMAX = 8
for k in range(1, KMAX):
    prev = c[-1]
    d = [prev[i + 1] * (i + 1) for i in range(N - 1)] + [F(0)]  # c'_{k-1}
    # (1/eta)*d + (-1)^k g_k * inv_u/eta ; eta^-1 terms must cancel
    s = (-1) ** k * g[k]
    lead = d[0] + s * inv_u[0]
    assert lead == 0, (k, lead)
    c.append([d[i + 1] + s * inv_u[i + 1] for i in range(N - 1)] + [F(0)])

def rust_table(nterms=26, kmax=8):
    rows = []
    for k in range(kmax):
        vals = ", ".join(repr(float(x)) for x in c[k][:nterms])
        rows.append(f"    [{vals}],")
    return "\n".join(rows)


if __name__ == "__main__":
    print(rust_table())
