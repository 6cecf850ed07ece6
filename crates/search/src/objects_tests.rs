use super::mask_objects;

#[test]
fn objects_become_their_kind() {
    let m = |q: &str| mask_objects(q).into_owned();
    assert_eq!(m("where do we call retry_with_backoff"), "where do we call symbol");
    assert_eq!(m("where is struct SessionState defined"), "where is struct symbol defined");
    assert_eq!(m("replace http:// with https:// in docs/links.md"), "replace scheme with scheme in file");
    assert_eq!(m("use println! instead of tracing"), "use symbol instead of tracing");
    assert_eq!(m("who calls handleRetry()?"), "who calls symbol");
    assert_eq!(m("fetch https://docs.rs/serde and summarise"), "fetch url and summarise");
    assert_eq!(m("ls src/components/"), "ls folder");
    assert_eq!(m("grep crate::net::pool"), "grep symbol");
}

#[test]
fn prose_and_product_names_stay() {
    for q in [
        "is the build green on GitHub?",
        "open a pull request for this branch",
        "read https://github.com/acme/api/issues/51",
        "yes! do it",
    ] {
        assert_eq!(mask_objects(q), q);
    }
}

#[test]
fn code_names_in_their_many_shapes() {
    let m = |q: &str| mask_objects(q).into_owned();
    assert_eq!(m("who calls PaymentGateway.charge?"), "who calls symbol");
    assert_eq!(m("find every place that reads process.env.STRIPE_KEY"), "find every place that reads symbol");
    assert_eq!(m("is @Transactional used anywhere"), "is symbol used anywhere");
    assert_eq!(m("any place we use eval( in the python code?"), "any place we use symbol in the python code?");
    assert_eq!(m("where is the InvoiceRepository interface implemented"), "where is the symbol interface implemented");
    assert_eq!(m("where does OrderStatus.CANCELLED get set"), "where does symbol get set");
    assert_eq!(m("open package.json"), "open file");
    assert_eq!(m("is the build green on GitHub or GitLab?"), "is the build green on GitHub or GitLab?");
}
