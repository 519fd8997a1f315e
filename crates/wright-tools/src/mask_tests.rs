use super::*;

const VALUE: &str = "s3cr3t/Tok+en?=&x y~ÿ";

fn masker() -> Masker {
    Masker::new(&[("TOKEN".to_string(), VALUE.to_string())]).unwrap()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn base64_matches_the_reference_vectors() {
    assert_eq!(base64(b"", STANDARD), "");
    assert_eq!(base64(b"f", STANDARD), "Zg==");
    assert_eq!(base64(b"fo", STANDARD), "Zm8=");
    assert_eq!(base64(b"foo", STANDARD), "Zm9v");
    assert_eq!(base64(b"foobar", STANDARD), "Zm9vYmFy");
    assert_eq!(base64(&[0xfb, 0xff], STANDARD), "+/8=");
    assert_eq!(base64(&[0xfb, 0xff], URL_SAFE), "-_8=");
}

#[test]
fn the_plain_value_is_masked() {
    assert_eq!(
        masker().mask(&format!("token is {VALUE}.\n")),
        "token is <secret:TOKEN>.\n"
    );
}

#[test]
fn every_base64_form_is_masked() {
    let m = masker();
    let mut echoed = VALUE.as_bytes().to_vec();
    echoed.push(b'\n');
    for payload in [VALUE.as_bytes(), echoed.as_slice()] {
        for alphabet in [STANDARD, URL_SAFE] {
            let padded = base64(payload, alphabet);
            let unpadded = padded.trim_end_matches('=').to_string();
            for form in [padded, unpadded] {
                assert_eq!(m.mask(&format!("[{form}]")), "[<secret:TOKEN>]", "{form}");
            }
        }
    }
}

#[test]
fn base64_of_the_value_inside_longer_data_is_masked() {
    let m = masker();
    for prefix in ["", "T=", "TOKEN="] {
        let data = format!("{prefix}{VALUE}\n");
        let encoded = base64(data.as_bytes(), STANDARD);
        let out = m.mask(&encoded);
        assert!(out.contains("<secret:TOKEN>"), "{prefix}: {out}");
        // What is left around the mask is at most a group of four on each side.
        assert!(out.len() <= "<secret:TOKEN>".len() + 16, "{prefix}: {out}");
    }
}

#[test]
fn hex_in_both_cases_and_wrapped_is_masked() {
    let m = masker();
    let lower = hex(VALUE.as_bytes());
    let upper = lower.to_ascii_uppercase();
    assert_eq!(m.mask(&lower), "<secret:TOKEN>");
    assert_eq!(m.mask(&upper), "<secret:TOKEN>");
    // `printf %s "$T" | xxd -p`: 60 characters a line, and the newline of `echo`.
    let wrapped = format!("{}\n{}0a\n", &lower[..20], &lower[20..]);
    assert_eq!(m.mask(&wrapped), "<secret:TOKEN>0a\n");
    let base64_wrapped = base64(VALUE.as_bytes(), STANDARD);
    let crlf = format!("{}\r\n{}", &base64_wrapped[..7], &base64_wrapped[7..]);
    assert_eq!(m.mask(&crlf), "<secret:TOKEN>");
}

#[test]
fn url_encoding_in_its_forms_is_masked() {
    let m = masker();
    // As Python's urllib.parse.quote(value, safe='') writes it.
    let quoted = "s3cr3t%2FTok%2Ben%3F%3D%26x%20y~%C3%BF";
    assert_eq!(m.mask(quoted), "<secret:TOKEN>");
    assert_eq!(
        m.mask("s3cr3t%2fTok%2ben%3f%3d%26x%20y~%c3%bf"),
        "<secret:TOKEN>"
    );
    // quote_plus: a space as +.
    assert_eq!(
        m.mask("s3cr3t%2FTok%2Ben%3F%3D%26x+y~%C3%BF"),
        "<secret:TOKEN>"
    );
}

#[test]
fn innocent_text_is_left_alone() {
    let m = masker();
    let text = "s3cr3t and Tok+en, nearly but not the value: s3cr3t/Tok+en?=&x y~";
    assert_eq!(m.mask(text), text);
    let empty = Masker::default();
    assert_eq!(empty.mask(VALUE), VALUE);
}

#[test]
fn several_secrets_are_each_named() {
    let m = Masker::new(&[
        ("A".to_string(), "alpha-value-1".to_string()),
        ("B".to_string(), "bravo-value-22".to_string()),
    ])
    .unwrap();
    assert_eq!(
        m.mask("x alpha-value-1 y 627261766f2d76616c75652d3232 z"),
        "x <secret:A> y <secret:B> z"
    );
    assert!(matches!(
        Masker::new(&[("E".to_string(), String::new())]),
        Err(MaskError::Empty(_))
    ));
}

/// Feeds `chunks` through a stream, as a command printing them would.
fn streamed(m: &Arc<Masker>, chunks: &[&[u8]]) -> Vec<u8> {
    let mut stream = MaskStream::new(Some(m.clone()));
    let mut out = Vec::new();
    for chunk in chunks {
        out.extend(stream.push(chunk));
    }
    out.extend(stream.finish());
    out
}

#[test]
fn a_value_split_across_chunks_is_masked() {
    let m = Arc::new(masker());
    let text = format!("before {VALUE} after\n");
    let bytes = text.as_bytes();
    // Every split into two, and one byte at a time.
    for at in 0..=bytes.len() {
        let out = streamed(&m, &[&bytes[..at], &bytes[at..]]);
        assert_eq!(out, b"before <secret:TOKEN> after\n", "split at {at}");
    }
    let singles: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(streamed(&m, &singles), b"before <secret:TOKEN> after\n");
    // An encoding a few characters at a time, as a loop with sleeps prints it.
    let encoded = format!("{}\n", base64(VALUE.as_bytes(), URL_SAFE));
    let pieces: Vec<&[u8]> = encoded.as_bytes().chunks(3).collect();
    assert_eq!(streamed(&m, &pieces), b"<secret:TOKEN>\n");
}

#[test]
fn a_stream_passes_on_what_cannot_be_a_secret_at_once() {
    let m = Arc::new(masker());
    let mut stream = MaskStream::new(Some(m.clone()));
    let long = "x".repeat(m.longest * 2);
    let out = stream.push(long.as_bytes());
    assert!(out.len() >= m.longest, "held back too much: {}", out.len());
    assert!(stream.pending_len() < m.longest);
    assert_eq!(stream.discard_last(3), 3);
    let rest = stream.finish();
    assert_eq!(out.len() + rest.len(), long.len() - 3);
    // Without secrets nothing is held.
    let mut plain = MaskStream::new(None);
    assert_eq!(plain.push(b"abc"), b"abc");
    assert_eq!(plain.pending_len(), 0);
}

#[test]
fn a_text_stream_is_cut_between_characters() {
    let m = Arc::new(masker());
    let text = format!("é{}ü said {VALUE}, ok ÿÿÿ", "x".repeat(m.longest));
    let mut stream = MaskStream::new(Some(m.clone()));
    let mut out = String::new();
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(2) {
        let piece: String = piece.iter().collect();
        let passed = stream.push_text(&piece);
        assert!(!passed.contains('\u{fffd}'), "{passed}");
        out.push_str(&passed);
    }
    out.push_str(&stream.finish_text());
    assert_eq!(out, text.replace(VALUE, "<secret:TOKEN>"));
}
