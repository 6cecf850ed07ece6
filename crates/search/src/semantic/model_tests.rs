//! Tests that need the real model skip (with the reason printed) unless
//! `QUIVER_TEST_SEARCH_MODEL` names one; CI sets it and requires it.

use super::*;
use crate::semantic::bert::reference::ReferenceBert;
use crate::semantic::{SemanticIndex, test_model_dir};
use crate::{SearchDoc, SearchIndex};

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("quiver-model-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_missing_or_malformed_model_is_a_clear_error() {
    let err = |d: &Path| Encoder::load(d).err().map(|e| e.to_string()).unwrap_or_default();
    let none = tmp("none");
    let e = err(&none.join("absent"));
    assert!(e.contains("not a directory"), "{e}");
    let e = err(&none);
    assert!(e.contains("config.json is missing") && e.contains("sentence-transformers"), "{e}");
    std::fs::write(none.join("config.json"), "{ not json").unwrap();
    assert!(err(&none).contains("config.json is not JSON"), "{}", err(&none));
    std::fs::write(none.join("config.json"), r#"{"model_type": "bert"}"#).unwrap();
    assert!(err(&none).contains("not a BERT config"), "{}", err(&none));
    let _ = std::fs::remove_dir_all(&none);
}

#[test]
fn pooling_and_prefixes_follow_the_model_files() {
    let d = tmp("pool");
    assert_eq!(pooling_of(&d).unwrap(), (Pooling::Mean, false));
    std::fs::write(
        d.join("modules.json"),
        r#"[{"path":"","type":"sentence_transformers.models.Transformer"},
            {"path":"1_Pooling","type":"sentence_transformers.models.Pooling"},
            {"path":"2_Normalize","type":"sentence_transformers.models.Normalize"}]"#,
    )
    .unwrap();
    std::fs::create_dir_all(d.join("1_Pooling")).unwrap();
    std::fs::write(d.join("1_Pooling/config.json"), r#"{"pooling_mode_cls_token": true}"#).unwrap();
    assert_eq!(pooling_of(&d).unwrap(), (Pooling::Cls, true));
    std::fs::write(d.join("1_Pooling/config.json"), r#"{"pooling_mode_max_tokens": true}"#).unwrap();
    assert!(pooling_of(&d).is_err());

    let cfg = serde_json::json!({"_name_or_path": "intfloat/e5-small-v2"});
    assert_eq!(prefixes_of(&d, &cfg).unwrap().passage, "passage: ");
    let cfg = serde_json::json!({"_name_or_path": "BAAI/bge-small-en-v1.5"});
    let p = prefixes_of(&d, &cfg).unwrap();
    assert!(p.query.starts_with("Represent this sentence") && p.passage.is_empty());
    assert_eq!(prefixes_of(&d, &serde_json::json!({})).unwrap(), Prefixes::default());
    std::fs::write(d.join("config_sentence_transformers.json"), r#"{"prompts": {"query": "q: ", "document": "d: "}}"#)
        .unwrap();
    assert_eq!(prefixes_of(&d, &cfg).unwrap(), Prefixes { query: "q: ".into(), passage: "d: ".into() });
    let _ = std::fs::remove_dir_all(&d);
}

fn doc(name: &str, description: &str) -> SearchDoc {
    SearchDoc {
        name: name.into(),
        aliases: vec![],
        domain: "mcp".into(),
        description: description.into(),
        prompt_snippet: None,
        phrasings: Vec::new(),
        examples: Vec::new(),
        params: vec![],
        server: None,
    }
}

#[test]
fn the_real_model_ranks_by_meaning_and_caches_vectors() {
    let Some(dir) = test_model_dir() else { return };
    let enc = Encoder::load(&dir).unwrap();
    assert_eq!(enc.dim(), 384);
    assert_eq!(enc.pooling(), Pooling::Mean);
    let q = enc.encode_query("what's the weather like tomorrow").unwrap();
    let norm: f32 = q.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-3, "{norm}");
    // batching (with padding) must not change a vector
    let texts = vec!["a short one".to_string(), "a much longer sentence that pads the other one in its batch".into()];
    let batched = enc.encode_passages(&texts, 8).unwrap();
    let alone = enc.encode_passages(&texts[..1], 8).unwrap();
    let dot: f32 = batched[0].iter().zip(&alone[0]).map(|(a, b)| a * b).sum();
    assert!(dot > 0.999, "{dot}");

    let docs = vec![
        doc("get_forecast", "Weather forecast for a city"),
        doc("send_email", "Send an email message to a recipient"),
        doc("create_invoice", "Bill a customer"),
    ];
    let cache = tmp("cache");
    let cold = SemanticIndex::build(&enc, &docs, Some(&cache)).unwrap();
    assert!(!cold.from_cache());
    let warm = SemanticIndex::build(&enc, &docs, Some(&cache)).unwrap();
    assert!(warm.from_cache());
    let lexical = SearchIndex::build(docs);
    for (query, want) in [("will it rain tomorrow", 0), ("write to my colleague", 1), ("charge the client", 2)] {
        let qv = enc.encode_query(query).unwrap();
        let scores = warm.scores(&qv);
        assert_eq!(scores, cold.scores(&qv));
        let top = warm.rank(&scores, 3, &|_| true);
        assert_eq!(top[0].doc, want, "{query}: {top:?}");
        let lex = lexical.search(query, 30, &|_| true);
        let fused = crate::fuse(&lexical, query, &lex, &scores, &crate::FusionParams::default(), 3, &|_| true);
        assert_eq!(fused[0].doc, want, "{query}: {fused:?}");
    }
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn a_changed_catalog_re_encodes_only_its_new_and_changed_tools() {
    let Some(dir) = test_model_dir() else { return };
    let enc = Encoder::load(&dir).unwrap();
    let mut docs = vec![
        doc("mcp__a__get_forecast", "Weather forecast for a city"),
        doc("mcp__a__send_email", "Send an email message to a recipient"),
        doc("mcp__b__create_invoice", "Bill a customer"),
    ];
    docs[1].phrasings = vec!["write to my colleague".into()];
    let cache = tmp("reuse");
    let first = SemanticIndex::build(&enc, &docs, Some(&cache)).unwrap();
    assert_eq!(first.encoded(), 4, "three tools and one phrasing");

    // server b's list changes: one tool edited, one added; server a's stay
    docs[2].description = "Bill a customer in their currency".into();
    docs.push(doc("mcp__b__refund", "Refund a payment"));
    let second = SemanticIndex::build(&enc, &docs, Some(&cache)).unwrap();
    assert_eq!(second.encoded(), 2, "only the changed and the new tool");
    let q = enc.encode_query("send a message").unwrap();
    let (s1, s2) = (first.scores(&q), second.scores(&q));
    assert_eq!(s1[..2], s2[..2], "reused vectors are the same vectors");

    // without a disk cache, an earlier catalog in memory serves the same way
    docs.push(doc("mcp__c__translate", "Translate text into another language"));
    let third = SemanticIndex::build_reusing(&enc, &docs, None, Some(&second)).unwrap();
    assert_eq!(third.encoded(), 1);
    // the store now holds every text seen, so a cold process reuses all of it
    let files: Vec<_> = std::fs::read_dir(&cache).unwrap().collect();
    assert_eq!(files.len(), 1, "one store per model");
    let again = SemanticIndex::build(&enc, &docs[..4], Some(&cache)).unwrap();
    assert!(again.from_cache());
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn encoder_and_index_can_move_to_a_background_thread() {
    // the engine builds vectors off the request path and shares them after
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Encoder>();
    send_sync::<SemanticIndex>();
}

/// The encoder before the speed work (`bert_reference.rs`) run the old way:
/// the batch padded to its longest text, an attention mask when it holds
/// more than one, then pooling and normalization.
fn reference_vectors(enc: &Encoder, reference: &ReferenceBert, texts: &[String]) -> Vec<Vec<f32>> {
    let encodings: Vec<_> =
        texts.iter().map(|t| enc.transformer().tokenizer.encode(t.as_str(), true).unwrap()).collect();
    let len = encodings.iter().map(|e| e.get_ids().len()).max().unwrap().max(1);
    let n = encodings.len();
    let mut ids = vec![enc.transformer().pad_id; n * len];
    let mut mask = vec![0u32; n * len];
    for (r, e) in encodings.iter().enumerate() {
        for (c, (&id, &m)) in e.get_ids().iter().zip(e.get_attention_mask()).enumerate() {
            ids[r * len + c] = id;
            mask[r * len + c] = m;
        }
    }
    let ids = candle_core::Tensor::from_vec(ids, (n, len), &enc.transformer().device).unwrap();
    let mask = candle_core::Tensor::from_vec(mask, (n, len), &enc.transformer().device).unwrap();
    let hidden = reference.forward(&ids, (n > 1).then_some(&mask)).unwrap();
    let pooled = match enc.pooling {
        Pooling::Cls => hidden.narrow(1, 0, 1).unwrap().squeeze(1).unwrap(),
        Pooling::Mean => {
            let m = mask.to_dtype(DType::F32).unwrap().unsqueeze(2).unwrap();
            let sum = hidden.broadcast_mul(&m).unwrap().sum(1).unwrap();
            sum.broadcast_div(&m.sum(1).unwrap()).unwrap()
        }
    };
    let mut rows: Vec<Vec<f32>> = pooled.to_vec2().unwrap();
    if enc.normalize {
        for r in &mut rows {
            let norm = r.iter().map(|x| x * x).sum::<f32>().sqrt();
            r.iter_mut().for_each(|x| *x /= norm);
        }
    }
    rows
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (norm(a) * norm(b))
}

#[test]
fn the_fast_forward_gives_the_reference_encoders_vectors() {
    let Some(dir) = test_model_dir() else { return };
    let enc = Encoder::load(&dir).unwrap();
    let config: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    let config = BertConfig::from_json(&config).unwrap();
    let weights = std::fs::read(dir.join("model.safetensors")).unwrap();
    let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &enc.transformer().device).unwrap();
    let reference = ReferenceBert::load(vb, &config).unwrap();

    let long = "Lists every storage account in the subscription with its kind, region, replication and access tier, \
                then the containers of each and the size of their blobs. "
        .repeat(12);
    let texts: Vec<String> = [
        "what's the weather like tomorrow",
        "commit",
        "",
        long.as_str(),
        "create issue: Create a new issue in a GitHub repository.",
        "列出所有存储账户",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut worst = (f64::MAX, String::new());
    let mut check = |what: &str, got: &[Vec<f32>], want: &[Vec<f32>]| {
        assert_eq!(got.len(), want.len(), "{what}");
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            let c = cosine(g, w);
            if c < worst.0 {
                worst = (c, format!("{what} #{i}"));
            }
        }
    };
    // one text at a time (no padding in either path): the query path
    for t in &texts {
        let q = format!("{}{t}", enc.prefixes.query);
        check("single", &[enc.encode_query(t).unwrap()], &reference_vectors(&enc, &reference, &[q]));
    }
    // all in one padded, masked reference batch; the fast path in one pass,
    // then two texts a pass (sorted by length, several passes)
    let prefixed: Vec<String> = texts.iter().map(|t| format!("{}{t}", enc.prefixes.passage)).collect();
    let want = reference_vectors(&enc, &reference, &prefixed);
    check("batched", &enc.encode_passages(&texts, 64).unwrap(), &want);
    check("batches of 2", &enc.encode_passages(&texts, 2).unwrap(), &want);
    eprintln!("worst cosine against the reference encoder: 1 - {:.2e} ({})", 1.0 - worst.0, worst.1);
    assert!(worst.0 >= 0.99999, "worst cosine {} at {}", worst.0, worst.1);
}
