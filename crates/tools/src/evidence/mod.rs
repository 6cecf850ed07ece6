pub mod handle_read;
pub mod retrieve_tool_result;
