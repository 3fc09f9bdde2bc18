//! Combining Shamir parts as sops (HashiCorp Vault's `shamir` package) does: each part is the
//! secret's length plus one byte, the last byte the x coordinate; every secret byte is the
//! Lagrange interpolation at 0 in GF(2^8) with the AES polynomial.

use zeroize::Zeroizing;

fn mul(mut a: u8, mut b: u8) -> u8 {
    let mut r = 0u8;
    while b != 0 {
        if b & 1 != 0 {
            r ^= a;
        }
        let carry = a & 0x80;
        a <<= 1;
        if carry != 0 {
            a ^= 0x1b;
        }
        b >>= 1;
    }
    r
}

fn inverse(a: u8) -> u8 {
    // a^254 = a^-1 in GF(2^8).
    let mut r = 1u8;
    let mut base = a;
    let mut e = 254u32;
    while e > 0 {
        if e & 1 == 1 {
            r = mul(r, base);
        }
        base = mul(base, base);
        e >>= 1;
    }
    r
}

/// Rebuilds the secret from every collected part.
pub fn combine(parts: &[Zeroizing<Vec<u8>>]) -> Result<Zeroizing<Vec<u8>>, String> {
    if parts.len() < 2 {
        return Err("less than two parts cannot be used to reconstruct the secret".into());
    }
    let len = parts[0].len();
    if len < 2 {
        return Err("parts must be at least two bytes".into());
    }
    if parts.iter().any(|p| p.len() != len) {
        return Err("all parts must be the same length".into());
    }
    let xs: Vec<u8> = parts.iter().map(|p| p[len - 1]).collect();
    for (i, x) in xs.iter().enumerate() {
        if xs[..i].contains(x) {
            return Err("duplicate part detected".into());
        }
    }
    let mut secret = Zeroizing::new(vec![0u8; len - 1]);
    for (idx, byte) in secret.iter_mut().enumerate() {
        let mut acc = 0u8;
        for (i, xi) in xs.iter().enumerate() {
            // Lagrange basis at 0: prod_{j != i} x_j / (x_i - x_j); subtraction is XOR.
            let mut basis = 1u8;
            for (j, xj) in xs.iter().enumerate() {
                if i != j {
                    basis = mul(basis, mul(*xj, inverse(xi ^ xj)));
                }
            }
            acc ^= mul(basis, parts[i][idx]);
        }
        *byte = acc;
    }
    Ok(secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splits with a degree-1 polynomial by hand and combines again.
    #[test]
    fn two_of_three_parts_rebuild_the_secret() {
        let secret = [7u8, 200, 0, 33];
        let slope = [5u8, 9, 250, 1];
        let part = |x: u8| {
            let mut p: Vec<u8> = secret
                .iter()
                .zip(slope)
                .map(|(s, a)| s ^ mul(a, x))
                .collect();
            p.push(x);
            Zeroizing::new(p)
        };
        assert_eq!(&combine(&[part(1), part(3)]).unwrap()[..], &secret);
        assert_eq!(&combine(&[part(2), part(3), part(1)]).unwrap()[..], &secret);
        assert!(combine(&[part(1), part(1)]).is_err());
        assert_eq!(mul(inverse(0x53), 0x53), 1);
    }
}
