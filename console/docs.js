// @ts-check
/**
 * Renders the OpenAPI document the Worker serves with Swagger UI. "Authorize" takes the API token for
 * "Try it out"; Swagger UI keeps it in memory only (persistAuthorization off).
 */
/** @type {any} */ (window).SwaggerUIBundle({
  url: "/v1/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  persistAuthorization: false,
  tryItOutEnabled: false,
});
