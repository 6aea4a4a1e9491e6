import type { APIGatewayProxyResult } from 'aws-lambda';
import { ApiError } from '#shared/http/errors';

export const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult => ({
  statusCode,
  headers: { 'Content-Type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

export const errorResponse = (error: ApiError): APIGatewayProxyResult => json(error.status, error.toBody(), error.headers);
