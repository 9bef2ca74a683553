# Minimal stand-in for mcp.types (python-sdk) sufficient to build tools/list entries.
from typing import Any, Optional
from pydantic import BaseModel, ConfigDict
class _M(BaseModel):
    model_config = ConfigDict(extra="allow")
class ToolAnnotations(_M):
    title: Optional[str] = None
    readOnlyHint: Optional[bool] = None
    destructiveHint: Optional[bool] = None
    idempotentHint: Optional[bool] = None
    openWorldHint: Optional[bool] = None
class Tool(_M):
    name: str
    title: Optional[str] = None
    description: Optional[str] = None
    inputSchema: dict[str, Any]
    outputSchema: Optional[dict[str, Any]] = None
    annotations: Optional[ToolAnnotations] = None
class _Any(_M):
    def __init__(self, *a, **k): super().__init__(**k)
TextContent = ImageContent = EmbeddedResource = ErrorData = Prompt = PromptArgument = PromptMessage = GetPromptResult = Resource = _Any
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
def __getattr__(name): return _Any
