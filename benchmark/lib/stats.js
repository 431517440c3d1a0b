'use strict'

// Summary statistics and Welch's two-sample t-test for benchmark rounds.
// Rounds of two server variants have unequal variances in practice (one
// variant may be closer to the load generator's ceiling), which is why the
// test is Welch's and not Student's pooled one.

function mean (xs) {
  let sum = 0
  for (const x of xs) sum += x
  return sum / xs.length
}

// Sample variance (n - 1 in the denominator); 0 for fewer than two values.
function variance (xs) {
  if (xs.length < 2) return 0
  const m = mean(xs)
  let sum = 0
  for (const x of xs) sum += (x - m) * (x - m)
  return sum / (xs.length - 1)
}

function median (xs) {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

function min (xs) {
  return Math.min(...xs)
}

function max (xs) {
  return Math.max(...xs)
}

// ln Γ(x) for x > 0: shift x up to at least 10 with Γ(x) = Γ(x + 1) / x, then
// apply Stirling's series, whose next term there is below 1e-15 relative.
function logGamma (x) {
  let shift = 0
  while (x < 10) {
    shift += Math.log(x)
    x += 1
  }
  const inv = 1 / x
  const inv2 = inv * inv
  const series = inv * (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260 - inv2 *
    (1 / 1680 - inv2 / 1188))))
  return (x - 0.5) * Math.log(x) - x + 0.5 * Math.log(2 * Math.PI) + series - shift
}

// Continued fraction for the incomplete beta function, evaluated with the
// modified Lentz method; converges quickly for x < (a + 1) / (a + b + 2).
function betaContinuedFraction (a, b, x) {
  const tiny = 1e-300
  const eps = 1e-15
  const fix = (v) => (Math.abs(v) < tiny ? tiny : v)
  let c = 1
  let d = 1 / fix(1 - (a + b) * x / (a + 1))
  let h = d
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m
    // Even step of the fraction.
    let num = m * (b - m) * x / ((a - 1 + m2) * (a + m2))
    d = 1 / fix(1 + num * d)
    c = fix(1 + num / c)
    h *= d * c
    // Odd step of the fraction.
    num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2))
    d = 1 / fix(1 + num * d)
    c = fix(1 + num / c)
    const delta = d * c
    h *= delta
    if (Math.abs(delta - 1) < eps) break
  }
  return h
}

/**
 * Regularized incomplete beta function I_x(a, b).
 *
 * @param {number} x in [0, 1]
 * @param {number} a > 0
 * @param {number} b > 0
 * @returns {number} I_x(a, b)
 */
function incompleteBeta (x, a, b) {
  if (x <= 0) return 0
  if (x >= 1) return 1
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) +
    a * Math.log(x) + b * Math.log(1 - x))
  // Use the symmetry I_x(a, b) = 1 - I_(1-x)(b, a) where the fraction
  // converges slowly.
  if (x < (a + 1) / (a + b + 2)) return front * betaContinuedFraction(a, b, x) / a
  return 1 - front * betaContinuedFraction(b, a, 1 - x) / b
}

/**
 * Two-sided tail probability P(|T| >= |t|) of Student's t distribution.
 * Known values: t = 1, df = 1 gives 0.5 (the Cauchy distribution);
 * t = 2.228139, df = 10 gives 0.05.
 *
 * @param {number} t the statistic
 * @param {number} df degrees of freedom (> 0, need not be an integer)
 * @returns {number} the two-sided p-value
 */
function studentTTwoSided (t, df) {
  return incompleteBeta(df / (df + t * t), df / 2, 0.5)
}

/**
 * Welch's unequal-variance t-test of the means of two samples.
 *
 * @param {number[]} xs first sample
 * @param {number[]} ys second sample
 * @returns {{t: number, df: number, p: number}|null} null when the test is
 *   undefined (fewer than two values in a sample, or no variance at all)
 */
function welch (xs, ys) {
  if (xs.length < 2 || ys.length < 2) return null
  const vx = variance(xs) / xs.length
  const vy = variance(ys) / ys.length
  const se2 = vx + vy
  if (se2 === 0) return null
  const t = (mean(xs) - mean(ys)) / Math.sqrt(se2)
  // Welch–Satterthwaite approximation of the degrees of freedom.
  const df = se2 * se2 / (vx * vx / (xs.length - 1) + vy * vy / (ys.length - 1))
  return { t, df, p: studentTTwoSided(t, df) }
}

module.exports = {
  mean,
  variance,
  median,
  min,
  max,
  logGamma,
  incompleteBeta,
  studentTTwoSided,
  welch
}
