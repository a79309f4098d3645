/**
 * The image's ENV as the local runtime reads it from the Dockerfile: the final stage's ENV lines,
 * in both of their forms, with quotes and references to what an earlier line of the stage set.
 */
import { describe, expect, it } from "vitest";
import { dockerfileEnv, imageEnv } from "../../runtime/image-env.ts";

describe("the image's ENV", () => {
  it("is the final stage's, later lines winning, continuations and comments read as the builder reads them", () => {
    const dockerfile = [
      "ARG BASE=debian",
      "FROM ${BASE} AS build",
      "ENV BUILD_ONLY=1",
      "FROM ${BASE}",
      "# a comment",
      "ENV A=1 B=\"two words\" \\",
      "    # a comment inside the instruction",
      "",
      "    C=${A}x D='$A' E=a\\ b",
      "env LEGACY some value",
      "ENV PATH=/opt/tools/bin:$PATH A=2",
      "RUN echo A=3",
    ].join("\n");
    expect(dockerfileEnv(dockerfile)).toEqual({ A: "2", B: "two words", C: "1x", D: "$A", E: "a b", LEGACY: "some value", PATH: "/opt/tools/bin:" });
  });

  it("refuses an ENV line it cannot read, rather than guess", () => {
    expect(() => dockerfileEnv('FROM x\nENV A="unclosed')).toThrow(/cannot read the ENV instruction/);
  });

  it("of container/Dockerfile holds what commands start from", () => {
    expect(imageEnv()).toMatchObject({ DEBIAN_FRONTEND: "noninteractive" });
  });
});
