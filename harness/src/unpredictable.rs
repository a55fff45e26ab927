//! Names nobody can guess ahead of a run: a run's directory and the names its trials' objects
//! carry, a results file's temporary copy. Whatever another local user plants at names of a
//! predictable form (a pid, a counter) never meets one of these.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

/// `len` characters of `[a-z0-9]` from the kernel's random source (`getrandom(2)`), about 5.2
/// bits each.
pub fn token(len: usize) -> Result<String> {
    const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = vec![0u8; len];
    let mut filled = 0;
    while filled < len {
        // SAFETY: writes at most `len - filled` bytes into the buffer's unfilled tail.
        let n = unsafe { libc::getrandom(bytes[filled..].as_mut_ptr().cast(), len - filled, 0) };
        if n > 0 {
            filled += n as usize;
            continue;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            bail!("reading the kernel's random source (getrandom): {e}");
        }
    }
    // 256 is 7 × 36 + 4: the first four characters come 8 times in 256, the rest 7, which
    // leaves a name of 6 characters past guessing all the same.
    Ok(bytes.iter().map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char).collect())
}

/// How many names `make_new` tries before it gives up: each one taken is another's, or planted.
pub const ATTEMPTS: usize = 64;

/// Makes something new at `at(token)` for a fresh token of `len` characters, passing over a
/// name that is taken (`make` fails with `AlreadyExists`) for another: the path it was made at
/// and what `make` returned there (its other errors included), or None when all `ATTEMPTS` were
/// taken. `make` must create exclusively, never through a symlink.
pub fn make_new<T>(
    len: usize,
    at: impl Fn(&str) -> PathBuf,
    mut make: impl FnMut(&Path) -> std::io::Result<T>,
) -> Result<Option<(PathBuf, std::io::Result<T>)>> {
    for _ in 0..ATTEMPTS {
        let path = at(&token(len)?);
        match make(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            made => return Ok(Some((path, made))),
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_has_its_length_and_alphabet_and_two_differ() {
        let (a, b) = (token(12).unwrap(), token(12).unwrap());
        assert_eq!(a.len(), 12);
        assert!(a.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()), "{a}");
        assert_ne!(a, b, "two tokens of 62 bits");
    }

    #[test]
    fn a_taken_name_is_passed_over_and_every_name_taken_is_none() {
        let mut tries = 0;
        let made = make_new(
            4,
            |t| PathBuf::from(t),
            |_| {
                tries += 1;
                if tries < 3 { Err(std::io::ErrorKind::AlreadyExists.into()) } else { Ok(tries) }
            },
        );
        let (path, made) = made.unwrap().unwrap();
        assert_eq!((path.as_os_str().len(), made.unwrap()), (4, 3));
        let other = make_new(
            4,
            |t| PathBuf::from(t),
            |_| -> std::io::Result<()> { Err(std::io::ErrorKind::PermissionDenied.into()) },
        );
        assert!(other.unwrap().unwrap().1.is_err(), "another error is returned, not passed over");
        let all = make_new(
            4,
            |t| PathBuf::from(t),
            |_| -> std::io::Result<()> { Err(std::io::ErrorKind::AlreadyExists.into()) },
        );
        assert!(all.unwrap().is_none());
    }
}
