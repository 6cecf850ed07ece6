use super::*;
use crate::semantic::Encoder;

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn the_embedded_model_loads_and_encodes_unit_vectors() {
    let enc = Encoder::embedded().expect("the embedded static model loads");
    assert!(enc.is_static());
    assert_eq!(enc.dim(), 256);
    assert!(enc.id().starts_with("static-"), "{}", enc.id());
    let v = enc.encode_query("read the file src/main.rs").unwrap();
    let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
    // the same text, the same bytes: rankings repeat run to run
    assert_eq!(v, enc.encode_query("read the file src/main.rs").unwrap());
}

#[test]
fn the_embedded_model_carries_meaning_beyond_shared_words() {
    let enc = Encoder::embedded().unwrap();
    let e = |t: &str| enc.encode_query(t).unwrap();
    // no word in common, close in meaning; against one far in meaning
    let kill = e("terminate the running process");
    assert!(cosine(&kill, &e("stop a background job")) > cosine(&kill, &e("write notes to a markdown file")));
    let disk = e("how much disk space is left");
    assert!(cosine(&disk, &e("storage usage of the drive")) > cosine(&disk, &e("open a pull request")));
}

#[test]
fn empty_and_special_only_texts_encode_to_zero_not_nan() {
    let enc = Encoder::embedded().unwrap();
    for t in ["", "   ", "[CLS] [SEP]"] {
        let v = enc.encode_query(t).unwrap();
        assert!(v.iter().all(|x| x.is_finite()), "{t:?}");
    }
    assert!(enc.encode_query("").unwrap().iter().all(|x| *x == 0.0));
}

#[test]
fn a_table_round_trips_through_int8() {
    let rows = vec![1.0, -0.5, 0.25, 0.0, 0.0, 0.0, -3.0, 3.0, 1.5];
    let bytes = write_table(&rows, 3);
    let t = Table::parse(&bytes).unwrap();
    assert_eq!((t.vocab, t.dim), (3, 3));
    let mut got = vec![0f32; 3];
    t.add_row(2, &mut got);
    for (g, w) in got.iter().zip(&rows[6..]) {
        assert!((g - w).abs() < 3.0 / 127.0, "{g} vs {w}");
    }
    let mut zero = vec![0f32; 3];
    t.add_row(1, &mut zero);
    assert_eq!(zero, vec![0.0; 3]);
}

#[test]
fn a_damaged_model_directory_is_a_precise_error() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("static.json"), br#"{"kind":"static","dim":3,"table_sha256":"x"}"#).unwrap();
    let e = StaticModel::load(dir).err().unwrap().to_string();
    assert!(e.contains("tokenizer.json"), "{e}");
    std::fs::write(dir.join("tokenizer.json"), include_bytes!("../../static-model/tokenizer.json")).unwrap();
    std::fs::write(dir.join("embeddings.q8"), b"QVSTAT01 short").unwrap();
    let e = StaticModel::load(dir).err().unwrap().to_string();
    assert!(e.contains("embeddings.q8"), "{e}");
    // a whole table, but too few rows for the tokenizer's vocabulary
    std::fs::write(dir.join("embeddings.q8"), write_table(&[0.5; 9], 3)).unwrap();
    let e = StaticModel::load(dir).err().unwrap().to_string();
    assert!(e.contains("3 rows for 30522 tokens"), "{e}");
    std::fs::write(dir.join("static.json"), br#"{"kind":"bert","dim":3,"table_sha256":"x"}"#).unwrap();
    let e = StaticModel::load(dir).err().unwrap().to_string();
    assert!(e.contains("is not \"static\""), "{e}");
    // and Encoder::load takes the static path for such a directory
    let e = Encoder::load(dir).err().unwrap().to_string();
    assert!(e.contains("static"), "{e}");
}

#[test]
fn the_committed_static_prior_belongs_to_the_embedded_model() {
    use crate::semantic::IntentPrior;
    let enc = Encoder::embedded().unwrap();
    let prior = IntentPrior::embedded().expect("static_prior.json parses");
    assert!(prior.fits(&enc), "static_prior.json was trained on another model than the embedded one");
    assert!(prior.tools().any(|t| t == "read_file"));
}
