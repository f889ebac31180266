"""The op vocabulary (OpClass, OpRole and their groups), defined in specs/op_kinds.py because engine profiles
name op roles; roofline's modules take it from here, beside the ops."""
from ..specs.op_kinds import (ATTENTION_CLASSES, EMBEDDING_ROLES, FFN_ROLES, LAYER_ATTENTION_ROLES, LOGIT_ROLES,
                              NON_LAYER_GEMM_ROLES, NON_LAYER_ROLES, TENSOR_CORE_CLASSES, OpClass, OpRole)

__all__ = ["ATTENTION_CLASSES", "EMBEDDING_ROLES", "FFN_ROLES", "LAYER_ATTENTION_ROLES", "LOGIT_ROLES",
           "NON_LAYER_GEMM_ROLES", "NON_LAYER_ROLES", "TENSOR_CORE_CLASSES", "OpClass", "OpRole"]
