"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.x = void 0;
var index_ts_1 = require("../../src/client/index.ts");
var node_child_process_1 = require("node:child_process");
exports.x = [index_ts_1.getSandbox, node_child_process_1.spawn];
