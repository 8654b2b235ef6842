// ptxmm's CodeMirror 5 mode for its PTX litmus tests (.ptx), Dat3M's PTX litmus dialect (.litmus)
// and, with {dialect: "cu"}, the few C++ words of a CUDA kernel. A tokenizer only: it colours
// what the front ends read (directives, opcodes and their qualifiers, registers, labels, thread
// references, conditions), it checks nothing — the checker's errors do that.
(function () {
  "use strict";
  function set(words) {
    var o = Object.create(null);
    words.split(" ").forEach(function (w) { o[w] = true; });
    return o;
  }
  var DIRECTIVES = set("test expect thread global shared const local param reg cta cluster gpu " +
    "texref surfref aliases version target address_size entry func visible extern align");
  var TYPES = set("u8 u16 u32 u64 s8 s16 s32 s64 b8 b16 b32 b64 f16 f32 f64 pred v2 v4");
  var ORDERS = set("weak relaxed acquire release acq_rel sc volatile mmio sys cta gpu cluster " +
    "proxy alias async texture surface constant");
  var OPCODES = set("ld st atom red fence membar bar barrier mov add sub mul div rem and or xor not " +
    "shl shr min max setp selp bra ret tex suld sust sured mapa mbarrier cp cvta cvt mad neg abs " +
    "exit call bfe bfi tld cold");
  var CONDITION = set("exists forall filter final locations");
  var CU = set("int unsigned long short char void bool float double if else for while do return " +
    "break continue const volatile struct auto __global__ __device__ __host__ __shared__ " +
    "__syncthreads __syncwarp __threadfence atomicAdd atomicCAS atomicExch threadIdx blockIdx " +
    "blockDim gridDim");

  function tokenBlock(close) {
    return function (stream, state) {
      if (stream.skipTo(close)) {
        stream.pos += close.length;
        state.tokenize = null;
      } else {
        stream.skipToEnd();
      }
      return "comment";
    };
  }

  CodeMirror.defineMode("ptx", function (config, options) {
    var cu = options.dialect === "cu";
    return {
      startState: function () { return { tokenize: null, opcodeNext: true }; },
      token: function (stream, state) {
        if (stream.sol()) state.opcodeNext = true;
        if (state.tokenize) return state.tokenize(stream, state);
        if (stream.eatSpace()) return null;
        if (stream.match("//")) { stream.skipToEnd(); return "comment"; }
        if (stream.match("/*")) { state.tokenize = tokenBlock("*/"); return state.tokenize(stream, state); }
        if (stream.match("(*")) { state.tokenize = tokenBlock("*)"); return state.tokenize(stream, state); }
        if (stream.match(/^"(?:[^"\\]|\\.)*"?/)) return "string";
        if (stream.sol() && stream.match(/^PTX\b/)) { stream.skipToEnd(); return "header"; }
        if (stream.match(/^~?exists\b/) || stream.match(/^forall\b/)) return "keyword";
        if (stream.match(/^(?:\/\\|\\\/|&&|\|\||==|!=|<=|>=|~)/)) return "operator";
        if (stream.match(/^@!?%[A-Za-z_][\w.]*/)) return "variable-2";  // a guard: the opcode follows
        if (stream.match(/^%[A-Za-z_][\w.]*/)) { state.opcodeNext = false; return "variable-2"; }
        if (stream.match(/^\.[A-Za-z_][\w:]*/)) {
          var q = stream.current().slice(1).split("::")[0];
          if (DIRECTIVES[q] && state.opcodeNext) return "def";
          if (TYPES[q]) return "type";
          if (ORDERS[q]) return "keyword";
          return "qualifier";
        }
        if (stream.match(/^0x[0-9a-fA-F]+/) || stream.match(/^-?\d+/)) {
          if (stream.peek() === ":") { stream.next(); return "atom"; }  // a Dat3M thread index
          return "number";
        }
        if (stream.match(/^\$?[A-Za-z_][\w$]*(?:-\w+)*/)) {
          var w = stream.current();
          var col = stream.peek() === ":";
          if (col && state.opcodeNext && !/^[%A-Za-z]/.test(stream.string.charAt(stream.pos + 1) || "")) {
            stream.next();
            return "tag";  // a label
          }
          if (col) { stream.next(); return "atom"; }  // T1:%r0, a thread reference
          if (/^P\d+$/.test(w)) return "atom";
          if (CONDITION[w]) return "keyword";
          if (cu && CU[w]) return "keyword";
          if (state.opcodeNext && OPCODES[w]) { state.opcodeNext = false; return "builtin"; }
          if (w.charAt(0) === "$") return "tag";
          state.opcodeNext = false;
          return "variable";
        }
        var ch = stream.next();
        if (ch === ";" || ch === "{" || ch === "}" || ch === "|") state.opcodeNext = true;
        if ("[](){}".indexOf(ch) >= 0) return "bracket";
        return null;
      },
      blockCommentStart: "/*",
      blockCommentEnd: "*/",
      lineComment: "//"
    };
  });
  CodeMirror.defineMIME("text/x-ptx", "ptx");
})();
