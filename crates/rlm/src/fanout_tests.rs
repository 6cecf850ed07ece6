use super::python_block;

#[test]
fn the_first_fenced_block_is_the_code() {
    assert_eq!(python_block("Let me count.\n```python\nprint(1)\n```\nthen more"), "print(1)\n");
    assert_eq!(python_block("```py\nx = 2\n```"), "x = 2\n");
    assert_eq!(python_block("```\nfinalize(3)\n```"), "finalize(3)\n");
    // No fence: the reply is taken as code (a bare `finalize(...)` line).
    assert_eq!(python_block("finalize('done')"), "finalize('done')");
    // An unclosed fence is not a block.
    assert_eq!(python_block("```python\nprint(1)"), "```python\nprint(1)");
}
