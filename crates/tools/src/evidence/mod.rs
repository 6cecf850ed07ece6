pub mod retrieve_tool_result;
pub mod handle_read;
