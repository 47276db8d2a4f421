name = "XiaoTangYuan companion (example)"
description = "Talks to the XiaoTangYuan server on this PC (xtyserver) over POST /v1/http."
author = "xtyserver"
version = "0.1.0"
api_version = 10
dst_compatible = true
client_only_mod = true
all_clients_require_mod = false
configuration_options = {
    { name = "host", label = "Server address", hover = "where xtyserver listens on this PC; try the next one if the mod cannot reach it",
      options = { { description = "localhost", data = "localhost" }, { description = "127.0.0.1", data = "127.0.0.1" }, { description = "[::1]", data = "[::1]" } }, default = "localhost" },
    { name = "port", label = "Port", hover = "the port XiaoTangYuan listens on: 8765 unless it was started with xtyserver --port",
      options = { { description = "8765", data = 8765 }, { description = "8766", data = 8766 }, { description = "8767", data = 8767 }, { description = "18765", data = 18765 } }, default = 8765 },
}
