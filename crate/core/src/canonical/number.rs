//! Number formatting for the two canonical forms.
//!
//! Both forms start from the same thing: the shortest decimal digit string that reads back
//! to the same double (ties broken towards the closer value), which Rust's `{:e}` formatter
//! produces without allocating. Only the layout differs:
//!
//! - Python's `repr(float)`: positional when the decimal exponent `n` (value = 0.DIGITS ×
//!   10^n) is in `-4 < n <= 16`, always with a fractional part (`1.0`); otherwise
//!   `d.ddde±XX` with at least two exponent digits (`1e-07`, `1e+16`).
//! - ECMAScript `Number::toString` (RFC 8785 §3.2.2.3): positional when `-6 < n <= 21`,
//!   integers without `.0`; otherwise `d.ddde±X` (`1e-7`, `1e+21`); `-0` prints as `0`.

use std::fmt::Write as _;

/// The shortest round-trip digits of a finite, non-zero `|x|` and its decimal exponent `n`
/// such that `|x| = 0.DIGITS × 10^n`. Digits are ASCII, at most 17 of them.
struct Shortest {
    buf: [u8; 32],
    len: usize,
    n: i32,
}

impl Shortest {
    fn of(x: f64) -> Shortest {
        debug_assert!(x.is_finite() && x != 0.0);
        let x = x.abs();
        let mut fmt = StackBuf::default();
        // `{:e}` on a finite double writes `D[.DDDD]e[-]X`: shortest round-trip digits.
        let _ = write!(fmt, "{x:e}");
        let s = &fmt.buf[..fmt.len];
        let e_at = s.iter().position(|&b| b == b'e').unwrap_or(s.len());
        let mut digits: u64 = 0;
        let mut k: i32 = 0;
        for &b in &s[..e_at] {
            if b.is_ascii_digit() {
                digits = digits * 10 + u64::from(b - b'0');
                k += 1;
            }
        }
        let exp = &s[(e_at + 1).min(s.len())..];
        let (neg, exp_digits) = match exp.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, exp),
        };
        let mut e: i32 = 0;
        for &b in exp_digits {
            e = e * 10 + i32::from(b - b'0');
        }
        let n = if neg { -e } else { e } + 1;
        let digits = tie_to_even(x, digits, n - k);
        Shortest::from_parts(digits, n - k)
    }

    /// The digits of `value × 10^q`, trailing zeros dropped.
    fn from_parts(mut value: u64, mut q: i32) -> Shortest {
        while value != 0 && value % 10 == 0 {
            value /= 10;
            q += 1;
        }
        let mut out = Shortest {
            buf: [0; 32],
            len: 0,
            n: 0,
        };
        let mut tmp = [0u8; 20];
        let digits = crate::bytes::itoa_u64(value, &mut tmp).as_bytes();
        out.len = digits.len();
        out.buf[..out.len].copy_from_slice(digits);
        out.n = q + out.len as i32;
        out
    }

    fn digits(&self) -> &str {
        // Only ASCII digits were copied in.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("0")
    }
}

/// Rust's shortest formatter returns *a* shortest digit string that reads back to `x`, but
/// when `x` lies exactly halfway between two such strings it rounds the half up, where
/// ECMAScript and Python pick the even one (RFC 8785's `1424953923781206.2` vector: the
/// double is exactly ...206.25). Given the digits `d` (value `d × 10^q`), return the even
/// neighbour instead when `x` is exactly the midpoint and that neighbour reads back to `x`.
fn tie_to_even(x: f64, d: u64, q: i32) -> u64 {
    // A tie needs the midpoint's last digit (a 5 at 10^(q-1)) to be a binary fraction of
    // `x`, which only happens below the units digit.
    if q > 0 || d % 2 == 0 {
        return d;
    }
    let t = (1 - q) as u32;
    for (mid, alt) in [(2 * d - 1, d - 1), (2 * d + 1, d + 1)] {
        // mid × 5 × 10^(q-1) = (2d ± 1)/2 × 10^q, the midpoint between d and alt.
        let Some(numer) = mid.checked_mul(5) else {
            continue;
        };
        if is_exactly(x, numer, t) && reads_back(alt, q, x) {
            return alt;
        }
    }
    d
}

/// Whether `x == numer / 10^t` exactly.
fn is_exactly(x: f64, numer: u64, t: u32) -> bool {
    // x = m × 2^e, so the test is m × 5^t × 2^(e+t) == numer. 5^t must divide numer, so a
    // t past 27 (5^28 > 2^64) can never match.
    if t > 27 {
        return false;
    }
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7FF) as i32;
    let frac = bits & ((1 << 52) - 1);
    let (m, e) = if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1 << 52), biased - 1075)
    };
    let lhs = u128::from(m) * 5u128.pow(t);
    let numer = u128::from(numer);
    let shift = e + t as i32;
    if shift >= 0 {
        shift < 64 && lhs <= numer >> shift && lhs << shift == numer
    } else {
        let s = (-shift) as u32;
        s < 128 && numer <= u128::MAX >> s && lhs == numer << s
    }
}

/// Whether `digits × 10^q` parses back to `x` (correctly rounded, as JSON readers do).
fn reads_back(digits: u64, q: i32, x: f64) -> bool {
    let mut buf = StackBuf::default();
    if write!(buf, "{digits}e{q}").is_err() {
        return false;
    }
    std::str::from_utf8(&buf.buf[..buf.len])
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        == Some(x)
}

/// A fixed buffer for one formatted double (`{:e}` of an f64 is at most ~25 bytes).
#[derive(Default)]
struct StackBuf {
    buf: [u8; 32],
    len: usize,
}

impl std::fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > self.buf.len() {
            return Err(std::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

fn push_zeros(out: &mut String, count: i32) {
    for _ in 0..count.max(0) {
        out.push('0');
    }
}

/// Appends Python's `repr(x)` of a double, as `json.dumps` writes it: `NaN`, `Infinity` and
/// `-Infinity` for the non-finite values, `0.0`/`-0.0` for zeros.
pub fn python_float_repr(x: f64, out: &mut String) {
    if x.is_nan() {
        out.push_str("NaN");
        return;
    }
    if x.is_infinite() {
        out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    if x.is_sign_negative() {
        out.push('-');
    }
    if x == 0.0 {
        out.push_str("0.0");
        return;
    }
    let s = Shortest::of(x);
    let digits = s.digits();
    let k = digits.len() as i32;
    let n = s.n;
    if -4 < n && n <= 16 {
        if n <= 0 {
            out.push_str("0.");
            push_zeros(out, -n);
            out.push_str(digits);
        } else if n >= k {
            out.push_str(digits);
            push_zeros(out, n - k);
            out.push_str(".0");
        } else {
            out.push_str(&digits[..n as usize]);
            out.push('.');
            out.push_str(&digits[n as usize..]);
        }
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = n - 1;
        out.push('e');
        out.push(if e < 0 { '-' } else { '+' });
        let _ = write!(out, "{:02}", e.unsigned_abs());
    }
}

/// Appends the ECMAScript `Number::toString` form of a finite double (RFC 8785 §3.2.2.3).
/// Returns `false`, writing nothing, for NaN and the infinities.
pub fn es_number(x: f64, out: &mut String) -> bool {
    if !x.is_finite() {
        return false;
    }
    if x == 0.0 {
        out.push('0');
        return true;
    }
    if x < 0.0 {
        out.push('-');
    }
    let s = Shortest::of(x);
    let digits = s.digits();
    let k = digits.len() as i32;
    let n = s.n;
    if k <= n && n <= 21 {
        out.push_str(digits);
        push_zeros(out, n - k);
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        push_zeros(out, -n);
        out.push_str(digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = n - 1;
        out.push('e');
        out.push(if e < 0 { '-' } else { '+' });
        let _ = write!(out, "{}", e.unsigned_abs());
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py(x: f64) -> String {
        let mut s = String::new();
        python_float_repr(x, &mut s);
        s
    }

    fn es(x: f64) -> String {
        let mut s = String::new();
        assert!(es_number(x, &mut s));
        s
    }

    #[test]
    fn python_repr_layouts() {
        for (x, want) in [
            (1.0, "1.0"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (1e-7, "1e-07"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1.5e16, "1.5e+16"),
            (123.456, "123.456"),
            (1e100, "1e+100"),
            (-2.5e-300, "-2.5e-300"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (0.1, "0.1"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
            (9007199254740993.0, "9007199254740992.0"),
        ] {
            assert_eq!(py(x), want, "{x:e}");
        }
    }

    #[test]
    fn es_layouts() {
        for (x, want) in [
            (1.0, "1"),
            (-0.0, "0"),
            (1e-7, "1e-7"),
            (1e-6, "0.000001"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.5, "1.5"),
            (-1.5e-10, "-1.5e-10"),
        ] {
            assert_eq!(es(x), want);
        }
        assert!(!es_number(f64::NAN, &mut String::new()));
    }

    /// RFC 8785 Appendix B: IEEE 754 bit patterns and their canonical text.
    #[test]
    fn rfc8785_appendix_b() {
        for (bits, want) in [
            ("0000000000000000", "0"),
            ("8000000000000000", "0"),
            ("0000000000000001", "5e-324"),
            ("8000000000000001", "-5e-324"),
            ("7fefffffffffffff", "1.7976931348623157e+308"),
            ("ffefffffffffffff", "-1.7976931348623157e+308"),
            ("4340000000000000", "9007199254740992"),
            ("c340000000000000", "-9007199254740992"),
            ("4430000000000000", "295147905179352830000"),
            ("44b52d02c7e14af5", "9.999999999999997e+22"),
            ("44b52d02c7e14af6", "1e+23"),
            ("44b52d02c7e14af7", "1.0000000000000001e+23"),
            ("444b1ae4d6e2ef4e", "999999999999999700000"),
            ("444b1ae4d6e2ef4f", "999999999999999900000"),
            ("444b1ae4d6e2ef50", "1e+21"),
            ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
            ("3eb0c6f7a0b5ed8d", "0.000001"),
            ("41b3de4355555553", "333333333.3333332"),
            ("41b3de4355555554", "333333333.33333325"),
            ("41b3de4355555555", "333333333.3333333"),
            ("41b3de4355555556", "333333333.3333334"),
            ("41b3de4355555557", "333333333.33333343"),
            ("becbf647612f3696", "-0.0000033333333333333333"),
            ("43143ff3c1cb0959", "1424953923781206.2"),
        ] {
            let x = f64::from_bits(u64::from_str_radix(bits, 16).unwrap());
            assert_eq!(es(x), want, "{bits}");
        }
        for bits in ["7fffffffffffffff", "7ff0000000000000", "fff0000000000000"] {
            let x = f64::from_bits(u64::from_str_radix(bits, 16).unwrap());
            assert!(!es_number(x, &mut String::new()), "{bits}");
        }
    }
}
