"""xtyserver: the local protocol/v1 server behind the XiaoTangYuan game companion."""

__version__ = "0.1.0"
